import { AtriumError, Code } from "@atrium/kit";

// The errors the broker contract fixes are kit's (fixed-errors.ts); this one it leaves open.

/** 404 whether the id is unknown or belongs to another workspace: ids are not confirmed. */
export const connectionNotFound = (id: string) =>
  new AtriumError(Code.NotFound, `connection ${id} not found`);
