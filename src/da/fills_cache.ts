// Recent fills trees by batch id (proof requests cluster on recent batches).
import { FillsTree } from './fills_tree.js';
import type { PublishedBatch } from './published.js';

const TREES_CACHED = 16;

export class FillsTreeCache {
  private readonly trees = new Map<number, FillsTree>();

  get(batch: PublishedBatch): FillsTree {
    const id = batch.header.batch_id;
    let t = this.trees.get(id);
    if (t === undefined) {
      t = FillsTree.build(batch.fills);
      if (this.trees.size >= TREES_CACHED) this.trees.delete(this.trees.keys().next().value as number);
      this.trees.set(id, t);
    }
    return t;
  }
}
