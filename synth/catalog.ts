/**
 * The catalog: every API defined in apis/catalog/ (or another catalog folder). Each module's default export is a
 * `DataService` or an `Api`; nothing else needs editing to add one. Clashes between modules fail here, naming both.
 */
import { Api } from '../apis/api';
import { DataService } from '../apis/dataservice';

/** A loaded catalog module: its file name and its exports. */
export type CatalogModule = readonly [file: string, exports: Record<string, unknown>];

/** The APIs of the given modules, in file order, after checking that no two claim the same name. */
export function catalogApis(modules: readonly CatalogModule[]): Api[] {
  const apis: Api[] = [];
  const from = new Map<Api, string>();
  for (const [file, mod] of modules) {
    const d = mod.default;
    const api = d instanceof DataService ? d.api : d instanceof Api ? d : undefined;
    if (!api) {
      throw new Error(
        `catalog module ${file}: its default export is not a DataService or an Api; end the module with \`export default new DataService({...})\``,
      );
    }
    apis.push(api);
    from.set(api, file);
  }
  return checkUnique(apis, (a) => from.get(a) ?? a.name);
}

/** Fails when two APIs share a name, kind or plural (in one group), naming both and what they share. */
export function checkUnique(apis: readonly Api[], where: (a: Api) => string = (a) => `data service "${a.name}"`): Api[] {
  const keys: [string, (a: Api) => string][] = [
    ['name', (a) => a.name],
    ['kind', (a) => `${a.group}/${a.kind}`],
    ['plural', (a) => `${a.group}/${a.plural}`],
  ];
  for (const [field, key] of keys) {
    const seen = new Map<string, Api>();
    for (const a of apis) {
      const k = key(a);
      const other = seen.get(k);
      if (other) {
        throw new Error(`${where(a)}: ${field} "${k}" is already used by ${where(other)}; give one of them another ${field}`);
      }
      seen.set(k, a);
    }
  }
  // A claim kind may not be another API's composite kind either (XFoo vs Foo with kind "XFoo").
  const kinds = new Map(apis.map((a) => [`${a.group}/${a.kind}`, a]));
  for (const a of apis) {
    const other = kinds.get(`${a.group}/X${a.kind}`);
    if (other) throw new Error(`${where(a)}: its composite kind X${a.kind} is the claim kind of ${where(other)}; rename one of them`);
  }
  return [...apis];
}
