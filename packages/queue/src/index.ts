export { bullPrefix, createProducerConnection, createWorkerConnection } from './connection.js';
export {
  JOBS,
  parsePayload,
  QUEUE_NAMES,
  type TJobName,
  type TPayload,
  type TQueueName,
  webhookOfDeliveryJob,
} from './job-catalog.js';
export {
  createQueues,
  enqueueDeleteRemote,
  enqueuePublish,
  enqueueQueuePlan,
  enqueueQueueSlot,
  enqueueSchedule,
  enqueueTokenRefresh,
  enqueueWebhookDeliveries,
  enqueueWebhookDelivery,
  PREPARE_AHEAD_MS,
  PREPARE_SPREAD_MS,
  removeSchedule,
  SCHEDULE_BACKSTOP_MS,
  type TDeliveryRef,
  type TQueues,
} from './queues.js';
