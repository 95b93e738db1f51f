import { operationCases } from './operations';

export default operationCases('restore', { backupRef: 'my-backup', instanceRef: 'my-db', serviceInstanceType: 'postgresql' }, [
  'backupRef',
  'instanceRef',
]);
