import { describe, expect, it } from "vitest";
import { parsePaste } from "../../src/envvars/paste";
import { EC_PEM, RSA_PEM } from "./envvars-pem";

// SPEC.md, app deployment contract item 7: "comment lines starting with `#` are dropped; `#` inside
// a value with no preceding space is part of the value; `${VAR}` and `$(cmd)` are stored literally;
// a `-----BEGIN` to `-----END` block is one multi-line value; comments, blank lines and quote style
// are not kept." Issue 14 adds: an optional `export ` prefix, and a line that cannot be read is
// reported with its line number (nothing is saved).

const read = (text: string) => {
  const result = parsePaste(text);
  if (!result.ok) throw new Error(result.message);
  return Object.fromEntries(result.variables.map((v) => [v.key, v.value]));
};

describe("parsePaste", () => {
  it.each<[string, string, Record<string, string>]>([
    ["a plain line", "A=1", { A: "1" }],
    ["comment lines starting with # are dropped", "# a comment\nA=1\n  # indented comment", { A: "1" }],
    ["blank lines are dropped", "\n\nA=1\n\n   \nB=2\n", { A: "1", B: "2" }],
    ["# with no space before it is part of the value", "A=abc#def", { A: "abc#def" }],
    ["# after a space starts a comment", "A=abc #note", { A: "abc" }],
    ["# after a tab starts a comment", "A=abc\t#note", { A: "abc" }],
    ["# right after = is part of the value", "A=#abc", { A: "#abc" }],
    ["a space then # right after = leaves an empty value", "A= #note", { A: "" }],
    ["${VAR} is stored literally", "A=${HOME}/x", { A: "${HOME}/x" }],
    ["$(cmd) is stored literally", "A=$(rm -rf /)", { A: "$(rm -rf /)" }],
    ["$VAR is stored literally", "A=$B", { A: "$B" }],
    ["double quotes are not kept", 'A="x y"', { A: "x y" }],
    ["single quotes are not kept", "A='x y'", { A: "x y" }],
    ["# inside quotes is part of the value", 'A="x #y"', { A: "x #y" }],
    ["a comment after a closing quote is dropped", "A='x' # note", { A: "x" }],
    ["${VAR} inside double quotes is stored literally", 'A="${B}"', { A: "${B}" }],
    ["backslashes are kept as written", 'A="a\\nb"', { A: "a\\nb" }],
    ["a quoted value may span lines", 'A="one\ntwo"', { A: "one\ntwo" }],
    ["an export prefix is accepted", "export A=1", { A: "1" }],
    ["spaces around = are not kept", "A = 1", { A: "1" }],
    ["an empty value", "A=", { A: "" }],
    ["= inside the value is kept", "URL=postgres://u:p@h/db?sslmode=require", { URL: "postgres://u:p@h/db?sslmode=require" }],
    ["a later line for the same key wins", "A=1\nA=2", { A: "2" }],
    ["CRLF line ends", "A=1\r\nB=2\r\n", { A: "1", B: "2" }],
    ["trailing spaces of an unquoted value are not kept", "A=1   ", { A: "1" }],
  ])("%s", (_, text, expected) => {
    expect(read(text)).toEqual(expected);
  });

  it("keeps invalid keys as written, for the row messages to name", () => {
    expect(parsePaste("port=80\n\nPATH=/bin")).toEqual({
      ok: true,
      variables: [
        { key: "port", value: "80", line: 1 },
        { key: "PATH", value: "/bin", line: 3 },
      ],
    });
  });

  it.each<[string, string]>([
    ["an RSA key", RSA_PEM],
    ["an EC key", EC_PEM],
  ])("reads %s after KEY= as one value, keeping its line breaks exactly", (_, pem) => {
    expect(read(`# keys\nBEFORE=1\nKEY=${pem}\nAFTER=2 # note`)).toEqual({ BEFORE: "1", KEY: pem, AFTER: "2" });
  });

  it.each<[string, string]>([
    ["an RSA key", RSA_PEM],
    ["an EC key", EC_PEM],
  ])("reads %s pasted with CRLF line ends as the same value with LF line breaks", (_, pem) => {
    expect(read(`KEY=${pem}\nAFTER=2\n`.replace(/\n/g, "\r\n"))).toEqual({ KEY: pem, AFTER: "2" });
  });

  it("reads a quoted PEM block the same as an unquoted one", () => {
    expect(read(`KEY="${EC_PEM}"`)).toEqual({ KEY: EC_PEM });
  });

  it("does not drop # lines or blank lines inside a PEM block", () => {
    const odd = "-----BEGIN TEST-----\n# not a comment\n\nabc\n-----END TEST-----";
    expect(read(`K=${odd}`)).toEqual({ K: odd });
  });

  it("gives each variable the line it starts on", () => {
    const result = parsePaste(`A=1\nKEY=${EC_PEM}\nB=2`);
    expect(result.ok && result.variables.map((v) => [v.key, v.line])).toEqual([["A", 1], ["KEY", 2], ["B", 7]]);
  });

  it.each<[string, string, number, string]>([
    ["a line without =", "A=1\nB=2\njust words\nC=3", 3, "Line 3 cannot be read: write it as KEY=value."],
    ["a line with no key", "A=1\n=value", 2, "Line 2 cannot be read: it has no key before =."],
    ["an unclosed double quote", 'A=1\n\nB="open\nC=3', 3, 'Line 3 cannot be read: the " quote is never closed.'],
    ["an unclosed single quote", "B='open", 1, "Line 1 cannot be read: the ' quote is never closed."],
    ["text after a closing quote", 'A="x"y', 1, 'Line 1 cannot be read: unexpected text after the closing ".'],
    ["a PEM block without its END line", "A=1\nKEY=-----BEGIN EC PRIVATE KEY-----\nabc", 2, "Line 2 cannot be read: the -----BEGIN block has no -----END line."],
    ["a CRLF paste keeps line numbers", "A=1\r\nB=2\r\nbroken\r\n", 3, "Line 3 cannot be read: write it as KEY=value."],
  ])("reports %s with its line number", (_, text, line, message) => {
    expect(parsePaste(text)).toEqual({ ok: false, line, message });
  });
});
