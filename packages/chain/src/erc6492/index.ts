export * from './erc6492-signature';
export * from './erc6492-check';
