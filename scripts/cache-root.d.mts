/** Types of scripts/cache-root.mjs (see there). */
export declare function cacheRoot(): string;
