import { brokerV1 } from "@atrium/api";
import { ScalarType } from "@bufbuild/protobuf";

/**
 * The provider fields, declared once: `ProviderInput` in proto/broker/v1/broker.proto. Everything
 * else (the API's field names, update masks, the stored columns, the rules' input, the
 * manifest's keys) is derived from it here.
 */
type Input = Omit<brokerV1.ProviderInput, "$typeName" | "$unknown">;

/** `apiBaseUrl` → `api_base_url`, as protoc names a field from its proto name. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/** A provider as written by a client: each field, absent when not sent. */
export type ProviderFields = {
  [K in keyof Input as SnakeCase<K & string>]?: NonNullable<Input[K]>;
};

export type ProviderField = keyof ProviderFields;

const descriptors = brokerV1.ProviderInputSchema.fields;

/** Every provider field's API name (snake_case), in the proto's order. */
export const PROVIDER_FIELDS = descriptors.map((field) => field.name as ProviderField);

/** API name of each field of the generated message (`apiBaseUrl` → `api_base_url`). */
export const PROVIDER_FIELD_BY_PROPERTY: ReadonlyMap<string, ProviderField> = new Map(
  descriptors.map((field) => [field.localName, field.name as ProviderField]),
);

/** The plain string fields: stored as text columns. The client secret never is (encrypted). */
export type ProviderTextField = Exclude<
  {
    [K in ProviderField]-?: NonNullable<ProviderFields[K]> extends string ? K : never;
  }[ProviderField],
  "client_secret"
>;

export const PROVIDER_TEXT_FIELDS = descriptors
  .filter(
    (field) =>
      field.fieldKind === "scalar" &&
      field.scalar === ScalarType.STRING &&
      field.name !== "client_secret",
  )
  .map((field) => field.name as ProviderTextField);

const known = new Set<string>(PROVIDER_FIELDS);

export function isProviderField(name: string): name is ProviderField {
  return known.has(name);
}
