/**
 * Values by a positive 32-bit integer id, for sets that churn on the data path: a session's
 * open streams (one added and removed per request), a listener's sockets, a pool's origin
 * connections. An open-addressing hash table (linear probing, deletion by backward shift) over
 * a typed array of ids and a plain array of values.
 *
 * Why not a `Map` or `Set`: V8 links each replaced backing table to its successor, so once a full
 * GC has promoted the table in use, dead old tables keep every later table and its values alive
 * through scavenges, and per-request objects stop dying young (a lasting slowdown after any full
 * GC, an idle spell's included: docs/performance.md#idtable-and-map-churn-after-a-full-gc). Here a
 * removed slot is cleared, nothing links one array to the next, and arrays change only on resize.
 */
export class IdTable<T> {
  /** The ids; 0 marks an empty slot (so 0 is not a valid id: a session's stream 0 is its control channel). */
  private ids!: Uint32Array;
  private values!: Array<T | undefined>;
  private mask!: number;
  /** 32 − log2(capacity): the shift that turns a Fibonacci hash into a slot index. */
  private shift!: number;
  private count = 0;
  /** The last id add() handed out. */
  private lastAdded = 0;

  /** `minCapacity`: a power of two, at least 2. */
  constructor(private readonly minCapacity = 16) {
    if (minCapacity < 2 || (minCapacity & (minCapacity - 1)) !== 0) throw new RangeError(`capacity ${minCapacity} is not a power of two`);
    this.allocate(minCapacity);
  }

  get size(): number {
    return this.count;
  }

  get(id: number): T | undefined {
    const slot = this.find(id);
    return slot < 0 ? undefined : this.values[slot];
  }

  has(id: number): boolean {
    return this.find(id) >= 0;
  }

  /** Adds or replaces the value with this id (1 to 2^32−1). */
  set(id: number, value: T): void {
    if (id <= 0 || id > 0xffffffff || !Number.isInteger(id)) throw new RangeError(`invalid id ${id}`);
    if ((this.count + 1) * 2 > this.ids.length) this.resize(this.ids.length * 2);
    const ids = this.ids;
    let slot = this.home(id);
    for (; ids[slot] !== 0; slot = (slot + 1) & this.mask) {
      if (ids[slot] === id) {
        this.values[slot] = value;
        return;
      }
    }
    ids[slot] = id;
    this.values[slot] = value;
    this.count++;
  }

  /**
   * Adds a value under an id the table picks (counting up, wrapping past 2^32−1, skipping ids in
   * use) and returns it: for sets whose members have no id of their own, such as sockets.
   */
  add(value: T): number {
    let id = this.lastAdded;
    do id = id === 0xffffffff ? 1 : id + 1;
    while (this.find(id) >= 0);
    this.lastAdded = id;
    this.set(id, value);
    return id;
  }

  /** Removes the value with this id; false if there was none. */
  delete(id: number): boolean {
    let hole = this.find(id);
    if (hole < 0) return false;
    const ids = this.ids;
    const mask = this.mask;
    // Backward shift: pull later entries of the probe run into the hole when their home slot
    // does not lie (cyclically) between the hole and where they sit, so no tombstones are needed.
    for (let next = (hole + 1) & mask; ids[next] !== 0; next = (next + 1) & mask) {
      const home = this.home(ids[next]!);
      const staysPut = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (staysPut) continue;
      ids[hole] = ids[next]!;
      this.values[hole] = this.values[next];
      hole = next;
    }
    ids[hole] = 0;
    this.values[hole] = undefined;
    this.count--;
    if (this.ids.length > this.minCapacity && this.count * 8 < this.ids.length) this.resize(this.ids.length / 2);
    return true;
  }

  /** The values, in no particular order (a copy: the caller may change the table meanwhile). */
  snapshot(): T[] {
    const out: T[] = [];
    for (let slot = 0; slot < this.ids.length; slot++) if (this.ids[slot] !== 0) out.push(this.values[slot]!);
    return out;
  }

  clear(): void {
    this.values.fill(undefined); // see resize()
    this.allocate(this.minCapacity);
  }

  /** The slot holding `id`, or -1. */
  private find(id: number): number {
    const ids = this.ids;
    for (let slot = this.home(id); ; slot = (slot + 1) & this.mask) {
      const at = ids[slot]!;
      if (at === id) return at === 0 ? -1 : slot;
      if (at === 0) return -1;
    }
  }

  /** Fibonacci hashing: consecutive ids (a session's stream ids grow by 2) land far apart. */
  private home(id: number): number {
    return Math.imul(id, 0x9e3779b1) >>> this.shift;
  }

  /** Fresh, empty arrays of `capacity` slots (a power of two). */
  private allocate(capacity: number): void {
    this.ids = new Uint32Array(capacity);
    this.values = new Array<T | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
    this.shift = 32 - Math.log2(capacity);
    this.count = 0;
  }

  private resize(capacity: number): void {
    const oldIds = this.ids;
    const oldValues = this.values;
    this.allocate(capacity);
    for (let slot = 0; slot < oldIds.length; slot++) if (oldIds[slot] !== 0) this.set(oldIds[slot]!, oldValues[slot]!);
    // The old array may already be in the old generation: emptied, it holds nothing alive.
    oldValues.fill(undefined);
  }
}
