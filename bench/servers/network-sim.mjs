// The network simulator answering at once, in a process of its own.
import { startNetworkSim } from '@sps/network-sim';

const running = await startNetworkSim(0);
// bench:media sends gigabytes of video: the request log keeps their sizes, not their bytes.
running.sim.recordBodyLimit = 64 * 1024;
process.send({ port: Number(new URL(running.url).port), url: running.url, baseUrls: running.baseUrls });
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
