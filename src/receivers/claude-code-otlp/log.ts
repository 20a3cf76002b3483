/** How the receiver's parts log: the service hands a component logger, tests a plain function. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type ReceiverLog = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
