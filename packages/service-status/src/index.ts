export { ServiceStatusReader } from './service-status';
