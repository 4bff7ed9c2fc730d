// The YAML library, for the commands and output formats that read or write YAML (`-o yaml`, a stage's
// serverless.yml). Imported lazily: the other commands (`nlc status` as a table, `nlc --help`) never
// parse its 160 KB at start.
export { parseDocument, stringify } from 'yaml';
