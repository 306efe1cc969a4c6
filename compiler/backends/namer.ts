/**
 * Deterministic names for the generated code. User names are kept where they are legal and free, and
 * otherwise get a numeric suffix: a name that is a reserved word or builtin of the target, or already taken
 * in the same function or at module scope (so no local ever shadows a module-level name). The same IR
 * object always gets the same name.
 */

export class Namer {
  private readonly taken = new Set<string>();
  private readonly assigned = new Map<object, string>();

  constructor(
    private readonly reserved: ReadonlySet<string>,
    private readonly parent?: Namer,
  ) {}

  private isFree(name: string): boolean {
    return !this.reserved.has(name) && !this.taken.has(name) && (this.parent?.isFree(name) ?? true);
  }

  /** Reserves `base` (or a variant of it) for `owner` and returns the name. */
  name(owner: object, base: string): string {
    const existing = this.assigned.get(owner);
    if (existing !== undefined) return existing;
    const clean = sanitize(base);
    let candidate = clean;
    for (let suffix = 1; !this.isFree(candidate); suffix++) candidate = `${clean}_${suffix}`;
    this.taken.add(candidate);
    this.assigned.set(owner, candidate);
    return candidate;
  }

  lookup(owner: object): string {
    const found = this.assigned.get(owner) ?? this.parent?.lookup(owner);
    if (found === undefined) throw new Error("internal: an IR object was printed before it was named");
    return found;
  }

  child(): Namer {
    return new Namer(this.reserved, this);
  }
}

/** Identifiers that are legal in C and WGSL: letters, digits and underscores, no leading digit or `__`. */
function sanitize(name: string): string {
  let clean = name.replace(/[^A-Za-z0-9_]/g, "_");
  if (/^[0-9]/.test(clean)) clean = `_${clean}`;
  if (clean.startsWith("__")) clean = `u${clean}`;
  if (clean === "_" || clean === "") clean = "v";
  return clean;
}
