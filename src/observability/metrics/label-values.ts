/** The one label value every class or queue that may not be named shares. */
export const OTHER_LABEL = 'other';

/** Default of `maxLabelValues`: distinct values one label (class, queue) may take before the rest report as `other`. */
export const DEFAULT_MAX_LABEL_VALUES = 500;

/**
 * The values one metric label may take. A producer picks class and queue
 * names (an `enqueue` token can mint thousands), and every new value is a
 * new series kept for the life of the process; so only the names the
 * process knows (its registered workers' classes, the queues it fetches)
 * are reported by name, at most `cap` of them, and everything else as `other`.
 */
export class LabelValues {
  private readonly admitted = new Set<string>();

  constructor(
    private readonly known: (value: string) => boolean,
    private readonly cap: number,
  ) {}

  of(value: string): string {
    if (this.admitted.has(value)) return value;
    if (this.admitted.size >= this.cap || value === OTHER_LABEL || !this.known(value)) return OTHER_LABEL;
    this.admitted.add(value);
    return value;
  }
}
