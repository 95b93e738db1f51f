/** The function's input contract: the recipe vocabulary and the Input envelope, imported by both sides. */
export * from './input';
export * from './recipe';
export * from './selection';
