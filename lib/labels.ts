/** Kubernetes' rules for a label (apimachinery validation: IsQualifiedName, IsValidLabelValue), as a problem to say. */
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key: value` is not a label the API server takes, or undefined when it is. */
export function labelProblem(key: string, value: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix)))
    return `the prefix "${prefix}" of label key "${key}" is not a DNS subdomain`;
  if (name.length > 63 || !NAME.test(name))
    return `label key "${key}" must be at most 63 letters, digits, "-", "_" or "." (after an optional DNS prefix and "/"), beginning and ending with a letter or digit`;
  if (value !== '' && (value.length > 63 || !NAME.test(value)))
    return `label value "${value}" must be empty or at most 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit`;
  return undefined;
}
