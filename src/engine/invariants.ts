// Invariant checks (docs/engine.md, "Invariants"), independent of both engines:
// - checkInvariants (state_invariants.ts): the state invariants, on a CanonicalState.
// - OrderTracker (event_invariants.ts): the event-stream invariants, fed (request, events) one
//   request at a time; it also rebuilds balances and open orders from the events alone, so
//   checkAgainstState can prove the events are a faithful account of every state change.
export { checkInvariants } from './state_invariants.js';
export { OrderTracker } from './event_invariants.js';
