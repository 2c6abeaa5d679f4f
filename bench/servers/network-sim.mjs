// The network simulator answering at once, in a process of its own.
import { startNetworkSim } from '@sps/network-sim';

const running = await startNetworkSim(0);
process.send({ port: Number(new URL(running.url).port), url: running.url, baseUrls: running.baseUrls });
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
