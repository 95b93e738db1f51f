import { operationCases } from './operations';

export default operationCases('backup', { instanceRef: 'my-db', serviceInstanceType: 'postgresql' }, ['instanceRef']);
