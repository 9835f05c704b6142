// Stamped from the root VERSION file by scripts/stamp-version.mjs; scripts/check-version.mjs fails when they disagree.
export const VERSION = "0.1.0";

export const USER_AGENT = `atriumctl/${VERSION}`;
