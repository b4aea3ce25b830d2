// Growing the engine's typed arrays (book pools, order index, ledger): a larger array of the same
// kind holding the old one's values at the same indexes, the rest zero. Growth is rare (capacity
// doubles), so these stay plain functions shared by every pool.

export function grownF64(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

export function grownI32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
