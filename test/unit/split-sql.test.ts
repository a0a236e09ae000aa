import { describe, expect, it } from "vitest";
import { splitStatements } from "../../src/databases/split-sql";

describe("splitStatements", () => {
  it.each<[string, string, string[]]>([
    ["one statement", "SELECT 1", ["SELECT 1"]],
    ["trailing semicolon", "SELECT 1;", ["SELECT 1;"]],
    ["two statements", "SELECT 1; SELECT 2;", ["SELECT 1;", "SELECT 2;"]],
    ["empty statements dropped", ";; SELECT 1;;", ["SELECT 1;"]],
    ["semicolon in a string", "INSERT INTO t VALUES ('a;b'); SELECT 2", ["INSERT INTO t VALUES ('a;b');", "SELECT 2"]],
    ["doubled quote in a string", "SELECT 'it''s; ok'; SELECT 2", ["SELECT 'it''s; ok';", "SELECT 2"]],
    ["quoted identifiers", 'SELECT "a;b", `c;d`, [e;f] FROM t; SELECT 2', ['SELECT "a;b", `c;d`, [e;f] FROM t;', "SELECT 2"]],
    ["line comment", "SELECT 1; -- a; comment\nSELECT 2", ["SELECT 1;", "-- a; comment\nSELECT 2"]],
    ["block comment", "SELECT /* ; */ 1; SELECT 2", ["SELECT /* ; */ 1;", "SELECT 2"]],
    ["comment-only tail dropped", "SELECT 1; -- done", ["SELECT 1;"]],
    [
      "trigger body",
      "CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); UPDATE c SET x = 1; END; SELECT 1",
      ["CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); UPDATE c SET x = 1; END;", "SELECT 1"],
    ],
    [
      "temporary trigger",
      "create temp trigger t after delete on a begin delete from b; end; select 1",
      ["create temp trigger t after delete on a begin delete from b; end;", "select 1"],
    ],
    ["unterminated string kept whole", "SELECT 'abc; def", ["SELECT 'abc; def"]],
    ["nothing", "  \n ", []],
  ])("%s", (_, sql, expected) => {
    expect(splitStatements(sql)).toEqual(expected);
  });
});
