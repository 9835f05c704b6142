import { type HttpRule, HttpRuleSchema, http } from "@atrium/api";
import {
  create,
  createFileRegistry,
  type MessageInitShape,
  setExtension,
} from "@bufbuild/protobuf";
import {
  type FieldDescriptorProto,
  FieldDescriptorProtoSchema,
  FileDescriptorProtoSchema,
  file_google_protobuf_timestamp,
  FieldDescriptorProto_Label as Label,
  MethodOptionsSchema,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";

/**
 * A test service covering what the memory proto does not use: nested path variables, enums,
 * repeated and map fields, `body: "<field>"`, additional bindings and response_body. Built as a
 * descriptor in code because generated code exists only for the protos under proto/.
 *
 *   enum Genre { GENRE_UNSPECIFIED = 0; GENRE_FICTION = 1; GENRE_SCIENCE = 2; }
 *   message Shelf { string id = 1; string theme = 2; }
 *   message Book { string title = 1; Genre genre = 2; repeated string tags = 3; int64 pages = 4;
 *                  bytes cover = 5; google.protobuf.Timestamp published_at = 6; }
 *   message ListBooksRequest { Shelf shelf = 1; repeated Genre genres = 2; repeated string tags = 3;
 *                  optional int32 page_size = 4; bool include_drafts = 5;
 *                  google.protobuf.Timestamp since = 6; map<string, string> labels = 7; }
 *   message ListBooksResponse { repeated Book books = 1; }
 *   message CreateBookRequest { Shelf shelf = 1; Book book = 2; }
 *   message GetBookRequest { string id = 1; }
 *   service Library {
 *     rpc ListBooks  GET  /v1/shelves/{shelf.id}/books
 *     rpc CreateBook POST /v1/shelves/{shelf.id}/books body "book"; also POST /v1/books:create body "*"
 *     rpc GetBook    GET  /v1/books/{id} response_body "title"
 *   }
 *   service Feed { rpc WatchBook(GetBookRequest) returns (stream Book)  GET /v1/books/{id}:watch }
 */
function field(
  name: string,
  number: number,
  type: Type,
  extra: { label?: Label; typeName?: string; proto3Optional?: boolean; oneofIndex?: number } = {},
): FieldDescriptorProto {
  return create(FieldDescriptorProtoSchema, {
    name,
    number,
    type,
    label: Label.OPTIONAL,
    ...extra,
  });
}

const repeated = { label: Label.REPEATED };
const message = (typeName: string) => ({ typeName });

function rule(init: MessageInitShape<typeof HttpRuleSchema>): HttpRule {
  return create(HttpRuleSchema, init);
}

function method(name: string, input: string, output: string, httpRule: HttpRule) {
  const options = create(MethodOptionsSchema);
  setExtension(options, http, httpRule);
  return { name, inputType: `.fixture.v1.${input}`, outputType: `.fixture.v1.${output}`, options };
}

const fileProto = create(FileDescriptorProtoSchema, {
  name: "fixture/v1/library.proto",
  package: "fixture.v1",
  syntax: "proto3",
  dependency: ["google/protobuf/timestamp.proto"],
  enumType: [
    {
      name: "Genre",
      value: [
        { name: "GENRE_UNSPECIFIED", number: 0 },
        { name: "GENRE_FICTION", number: 1 },
        { name: "GENRE_SCIENCE", number: 2 },
      ],
    },
  ],
  messageType: [
    { name: "Shelf", field: [field("id", 1, Type.STRING), field("theme", 2, Type.STRING)] },
    {
      name: "Book",
      field: [
        field("title", 1, Type.STRING),
        field("genre", 2, Type.ENUM, message(".fixture.v1.Genre")),
        field("tags", 3, Type.STRING, repeated),
        field("pages", 4, Type.INT64),
        field("cover", 5, Type.BYTES),
        field("published_at", 6, Type.MESSAGE, message(".google.protobuf.Timestamp")),
      ],
    },
    {
      name: "ListBooksRequest",
      field: [
        field("shelf", 1, Type.MESSAGE, message(".fixture.v1.Shelf")),
        field("genres", 2, Type.ENUM, { ...repeated, ...message(".fixture.v1.Genre") }),
        field("tags", 3, Type.STRING, repeated),
        field("page_size", 4, Type.INT32, { proto3Optional: true, oneofIndex: 0 }),
        field("include_drafts", 5, Type.BOOL),
        field("since", 6, Type.MESSAGE, message(".google.protobuf.Timestamp")),
        field("labels", 7, Type.MESSAGE, {
          ...repeated,
          ...message(".fixture.v1.ListBooksRequest.LabelsEntry"),
        }),
      ],
      oneofDecl: [{ name: "_page_size" }],
      nestedType: [
        {
          name: "LabelsEntry",
          field: [field("key", 1, Type.STRING), field("value", 2, Type.STRING)],
          options: { mapEntry: true },
        },
      ],
    },
    {
      name: "ListBooksResponse",
      field: [field("books", 1, Type.MESSAGE, { ...repeated, ...message(".fixture.v1.Book") })],
    },
    {
      name: "CreateBookRequest",
      field: [
        field("shelf", 1, Type.MESSAGE, message(".fixture.v1.Shelf")),
        field("book", 2, Type.MESSAGE, message(".fixture.v1.Book")),
      ],
    },
    { name: "GetBookRequest", field: [field("id", 1, Type.STRING)] },
  ],
  service: [
    {
      name: "Library",
      method: [
        method(
          "ListBooks",
          "ListBooksRequest",
          "ListBooksResponse",
          rule({ pattern: { case: "get", value: "/v1/shelves/{shelf.id}/books" } }),
        ),
        method(
          "CreateBook",
          "CreateBookRequest",
          "Book",
          rule({
            pattern: { case: "post", value: "/v1/shelves/{shelf.id}/books" },
            body: "book",
            additionalBindings: [
              { pattern: { case: "post", value: "/v1/books:create" }, body: "*" },
            ],
          }),
        ),
        method(
          "GetBook",
          "GetBookRequest",
          "Book",
          rule({ pattern: { case: "get", value: "/v1/books/{id}" }, responseBody: "title" }),
        ),
      ],
    },
    {
      name: "Feed",
      method: [
        {
          ...method(
            "WatchBook",
            "GetBookRequest",
            "Book",
            rule({ pattern: { case: "get", value: "/v1/books/{id}:watch" } }),
          ),
          serverStreaming: true,
        },
      ],
    },
  ],
});

const registry = createFileRegistry(fileProto, (name) =>
  name === "google/protobuf/timestamp.proto" ? file_google_protobuf_timestamp : undefined,
);

export const libraryService = registry.getService("fixture.v1.Library")!;
export const feedService = registry.getService("fixture.v1.Feed")!;
