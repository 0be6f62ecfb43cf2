export * from "./cross";
export * from "./seed";
