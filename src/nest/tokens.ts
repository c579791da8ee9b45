/** Injection tokens of the Nest layer. */
export const WURK_RESOLVED_OPTIONS = Symbol('wurk:resolved-options');
