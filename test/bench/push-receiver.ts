/**
 * The push benchmark's receiver, in its own process: the OTLP LogsService `Export` on
 * @grpc/grpc-js, taking each message as bytes (no decoding, the same cost for both senders) and
 * answering the empty response. Prints its address, then runs until killed.
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_SERVICE } from '../../src/otlp/proto.js';

const id = (b: Buffer) => b;
const server = new grpc.Server({ 'grpc.max_receive_message_length': -1 });
let bytes = 0;
server.addService(
  {
    Export: {
      path: `/${GRPC_SERVICE.logs}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: id,
      requestDeserialize: id,
      responseSerialize: id,
      responseDeserialize: id,
    },
  } as grpc.ServiceDefinition,
  {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      bytes += call.request.length;
      cb(null, Buffer.alloc(0));
    },
  },
);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => {
  process.stderr.write(`received ${bytes} bytes\n`);
  process.exit(0);
});
