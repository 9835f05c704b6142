import { create, toBinary } from "@bufbuild/protobuf";
import { fileDesc, messageDesc, serviceDesc } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";

/**
 * A streaming gRPC service for tests, described at run time: Atrium's own APIs are all unary, and
 * the credential interceptor's stream retry needs a server-streaming and a bidi method to prove.
 */
const file = fileDesc(
  Buffer.from(
    toBinary(
      FileDescriptorProtoSchema,
      create(FileDescriptorProtoSchema, {
        name: "atrium_test/echo.proto",
        package: "atrium_test",
        syntax: "proto3",
        messageType: [
          {
            name: "Ping",
            field: [
              {
                name: "text",
                number: 1,
                type: FieldDescriptorProto_Type.STRING,
                label: FieldDescriptorProto_Label.OPTIONAL,
                jsonName: "text",
              },
            ],
          },
        ],
        service: [
          {
            name: "Echo",
            method: [
              {
                name: "Watch",
                inputType: ".atrium_test.Ping",
                outputType: ".atrium_test.Ping",
                serverStreaming: true,
              },
              {
                name: "Chat",
                inputType: ".atrium_test.Ping",
                outputType: ".atrium_test.Ping",
                clientStreaming: true,
                serverStreaming: true,
              },
            ],
          },
        ],
      }),
    ),
  ).toString("base64"),
);

export interface Ping {
  $typeName: "atrium_test.Ping";
  text: string;
}

export const PingSchema = messageDesc<Ping>(file, 0);

export const EchoService = serviceDesc<{
  watch: { methodKind: "server_streaming"; input: typeof PingSchema; output: typeof PingSchema };
  chat: { methodKind: "bidi_streaming"; input: typeof PingSchema; output: typeof PingSchema };
}>(file, 0);
