// Header names looked up by length first: most headers have a length no special header has, so
// they cost one map probe and no lowercasing.

/** Special header names (lowercase) and what to do with each, grouped by name length. */
export type RoleTable<Role extends string> = ReadonlyMap<number, readonly [string, Role][]>;

export function roleTable<Role extends string>(roles: Record<string, Role>): RoleTable<Role> {
  const table = new Map<number, [string, Role][]>();
  for (const [name, role] of Object.entries(roles)) {
    const group = table.get(name.length) ?? [];
    group.push([name, role]);
    table.set(name.length, group);
  }
  return table;
}

/** The role of a header name in the table, or "keep" when it has none. */
export function roleOf<Role extends string>(table: RoleTable<Role>, name: string): Role | "keep" {
  const candidates = table.get(name.length);
  if (candidates === undefined) return "keep";
  const lower = name.toLowerCase();
  for (const [candidate, role] of candidates) if (candidate === lower) return role;
  return "keep";
}
