// MQVersion ordinals (Java: common/MQVersion.java). We answer as a 4.9.8-compatible server: Java clients
// cache the broker's version and refuse SQL92 against < V4_1_0; namesrv returns standard JSON to >= V4_9_4.
export const MQVersion = {
  V3_4_9: 121,
  V4_1_0_SNAPSHOT: 232,
  V4_5_2: 317,
  V4_9_3: 399,
  V4_9_4: 401,
  V4_9_8: 409,
  V5_3_1: 475,
} as const;
export const SERVER_VERSION = MQVersion.V4_9_8;
export const SERVER_VERSION_DESC = 'V4_9_8';
