// Placeholder entry point until the server lands (issue 3).
console.log('ringbook: server not built yet');
