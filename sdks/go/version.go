package atrium

// Version is stamped from the repository's VERSION file by scripts/stamp-version.mjs.
const Version = "0.1.0"

const userAgent = "atrium-sdk-go/" + Version
