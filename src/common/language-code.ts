// LanguageCode ordinals (Java: remoting/protocol/LanguageCode.java). The binary header carries the ordinal,
// the JSON header the name.
export const LANGUAGE_NAMES = [
  'JAVA', 'CPP', 'DOTNET', 'PYTHON', 'DELPHI', 'ERLANG', 'RUBY', 'OTHER', 'HTTP', 'GO', 'PHP', 'OMS', 'RUST', 'NODE_JS',
] as const;

export function languageNameFromOrdinal(ordinal: number): string {
  return LANGUAGE_NAMES[ordinal] ?? 'OTHER';
}
