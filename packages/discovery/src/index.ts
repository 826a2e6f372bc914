export {
  BAZAAR,
  MAX_DECLARATION_DEPTH,
  takeDeclaration,
  readDeclaration,
  bazaarResponseOf,
  extensionResponsesHeader,
  type BazaarResponse,
  type DeclarationIntake,
  type DeclarationLimits,
  type DeclaredPayment,
  type Listing,
  type ResourceIdentity,
} from './declaration';
export { validateInfo, MAX_PATTERN_LENGTH, type InfoProblem } from './schema-check';
export { checkResourceUrl, privateHostProblem, isPublicAddress, MAX_URL_LENGTH } from './resource-url';
export { DiscoveryIndexer, type DiscoveryIndexerOptions } from './indexer';
export {
  DiscoveryCatalog,
  itemOf,
  type DiscoveryCatalogOptions,
  type DiscoveryItem,
  type DiscoveryListAnswer,
  type DiscoverySearchAnswer,
  type ListQuery,
  type SearchQuery,
  type MerchantResourceView,
} from './catalog';
