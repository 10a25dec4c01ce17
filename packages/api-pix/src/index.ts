export {
  PspError,
  apiPixClient,
  clip,
  cutCodePoints,
  refusal,
  valor,
  type ApiPixAnswer,
  type ApiPixClient,
  type ApiPixClientOptions,
  type PspFetch,
} from './client';
export {
  apiPixEnv,
  apiPixEnvNames,
  apiPixEnvProblems,
  apiPixUrls,
  readClientCertificate,
  sameApiUrl,
} from './config';
