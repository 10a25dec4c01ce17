export { qrMatrix, type QrMatrix } from './matrix';
export { renderQrPng, renderQrPngBase64, type QrPngOptions } from './png';
export { optimalSegments, versionClass, type QrSegment } from './segments';
