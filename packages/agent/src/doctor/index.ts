export { runDoctor, DEFAULT_TRANSFER_BYTES, type CheckResult, type DoctorOptions } from './doctor.js';
export { CHECK_NAMES, type CheckName } from './hints.js';
export { checkLines, jsonReport, summaryLine } from './report.js';
