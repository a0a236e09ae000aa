/** Text files imported as strings (Vite's `?raw`), e.g. wrangler.toml in a configuration test. */
declare module "*?raw" {
  const text: string;
  export default text;
}
