/**
 * The column types the tables use, named for what they hold; each engine turns them into its own drizzle
 * columns (src/db/sqlite/sqlite-tables.ts, src/db/postgres/postgres-tables.ts), so one description serves both.
 * `integer` is 32 bits on PostgreSQL and `bigInteger` 64 (both numbers in JavaScript); SQLite's integers are
 * all 64 bits.
 */
type ColumnKind = 'text' | 'integer' | 'bigInteger' | 'serialId';

/** The values a text column may hold, when it is an enumeration (a status, a kind). */
export type EnumValues = readonly [string, ...string[]];

/**
 * What one column is: enough for either engine to declare it. Its facts are also type parameters, so each
 * engine's table keeps row types as precise as a table written for it alone.
 */
export class Column<
  TKind extends ColumnKind = ColumnKind,
  TName extends string = string,
  TEnum extends EnumValues | undefined = EnumValues | undefined,
  TNotNull extends boolean = boolean,
  THasDefault extends boolean = boolean,
  TPrimaryKey extends boolean = boolean,
> {
  constructor(
    readonly kind: TKind,
    readonly name: TName,
    readonly values: TEnum,
    readonly flags: { notNull: TNotNull; hasDefault: THasDefault; primaryKey: TPrimaryKey },
    readonly defaultValue?: string | number,
  ) {}

  notNull(): Column<TKind, TName, TEnum, true, THasDefault, TPrimaryKey> {
    return new Column(this.kind, this.name, this.values, { ...this.flags, notNull: true }, this.defaultValue);
  }

  default(value: ValueOf<TKind, TEnum>): Column<TKind, TName, TEnum, TNotNull, true, TPrimaryKey> {
    return new Column(this.kind, this.name, this.values, { ...this.flags, hasDefault: true }, value);
  }

  primaryKey(): Column<TKind, TName, TEnum, TNotNull, THasDefault, true> {
    return new Column(
      this.kind,
      this.name,
      this.values,
      { ...this.flags, primaryKey: true },
      this.defaultValue,
    );
  }
}

type ValueOf<TKind extends ColumnKind, TEnum> = TKind extends 'text'
  ? TEnum extends EnumValues
    ? TEnum[number]
    : string
  : number;

type Plain<
  TKind extends ColumnKind,
  TName extends string,
  TEnum extends EnumValues | undefined = undefined,
> = Column<TKind, TName, TEnum, false, false, false>;

const PLAIN = { notNull: false, hasDefault: false, primaryKey: false } as const;

/** Text; with `enum`, one of its values (checked by the type, not by the database). */
export function text<const TName extends string>(name: TName): Plain<'text', TName>;
export function text<const TName extends string, const TEnum extends EnumValues>(
  name: TName,
  config: { enum: TEnum },
): Plain<'text', TName, TEnum>;
export function text(
  name: string,
  config?: { enum: EnumValues },
): Plain<'text', string, EnumValues | undefined> {
  return new Column('text', name, config?.enum, PLAIN);
}

/** A small count or number (a turn, attempts, a 0/1 flag). */
export function integer<const TName extends string>(name: TName): Plain<'integer', TName> {
  return new Column('integer', name, undefined, PLAIN);
}

/** A number that may outgrow 32 bits (a sequence number, a time). */
export function bigInteger<const TName extends string>(name: TName): Plain<'bigInteger', TName> {
  return new Column('bigInteger', name, undefined, PLAIN);
}

/** Milliseconds since the epoch; every time column uses it so ordering and arithmetic are plain integers. */
export const time = bigInteger;

/** A time that is always set. */
export function millis<const TName extends string>(name: TName) {
  return time(name).notNull();
}

export function createdAt() {
  return millis('created_at');
}

/** `id`, numbered by the database in insertion order. */
export function serialId(): Column<'serialId', 'id', undefined, true, true, true> {
  return new Column('serialId', 'id', undefined, { notNull: true, hasDefault: true, primaryKey: true });
}
