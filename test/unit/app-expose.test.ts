import { describe, expect, it } from "vitest";
import { probedPort, type ProbedPort } from "../../src/apps/contract/expose";

// SPEC.md App deployment contract 2: no PORT variable is set. The first EXPOSE line in the built
// file gives the port probed. With no EXPOSE line, port 8000 is probed. A line naming two ports
// uses the first. A variable reference in the line is not read and falls back to 8000.
// SPEC.md Limits, Exposed ports: exactly one HTTP port per app (so only TCP ports count).

const exposed = (port: number, detail = ""): ProbedPort => ({ port, source: "expose", reason: `first EXPOSE line, ${port}${detail}` });
const NONE: ProbedPort = { port: 8000, source: "default", reason: "no EXPOSE line, default 8000" };
const VARIABLE: ProbedPort = { port: 8000, source: "variable", reason: "EXPOSE uses a variable, default 8000" };
const invalid = (spec: string): ProbedPort => ({ port: 8000, source: "default", reason: `EXPOSE names "${spec}", not a valid port, default 8000` });
const lines = (...text: string[]) => text.join("\n");

describe("probedPort", () => {
  it.each<[string, string | null, ProbedPort]>([
    ["no build file text", null, NONE],
    ["empty file", "", NONE],
    ["no EXPOSE line", lines("FROM node:22", "CMD node server.js"), NONE],
    ["one port", lines("FROM node:22", "EXPOSE 3000", "CMD node server.js"), exposed(3000)],
    ["lowercase keyword", "from node\nexpose 3000", exposed(3000)],
    ["mixed-case keyword", "FROM node\nExPoSe 3000", exposed(3000)],
    ["leading whitespace", "FROM node\n   \tEXPOSE 3000", exposed(3000)],
    ["tab after the keyword", "FROM node\nEXPOSE\t3000", exposed(3000)],
    ["CRLF line ends", "FROM node\r\nEXPOSE 3000\r\n", exposed(3000)],
    ["byte-order mark", "\uFEFFEXPOSE 3000", exposed(3000)],
    ["two ports on a line: the first", "EXPOSE 3000 9229", exposed(3000)],
    ["two EXPOSE lines: the first", lines("EXPOSE 4000", "EXPOSE 3000"), exposed(4000)],
    ["/tcp suffix", "EXPOSE 8080/tcp", exposed(8080)],
    ["/TCP suffix", "EXPOSE 8080/TCP", exposed(8080)],
    ["a UDP port is passed over for the next TCP port", "EXPOSE 53/udp 8080", exposed(8080)],
    ["an SCTP port is passed over too", "EXPOSE 9000/sctp 8080/tcp", exposed(8080)],
    ["only UDP ports", "EXPOSE 53/udp", { port: 8000, source: "default", reason: "EXPOSE names no TCP port, default 8000" }],
    ["a later EXPOSE line is not read after a UDP-only first line", lines("EXPOSE 53/udp", "EXPOSE 3000"), { port: 8000, source: "default", reason: "EXPOSE names no TCP port, default 8000" }],
    ["a range names its first port", "EXPOSE 8000-8010", exposed(8000, " (first of 8000-8010)")],
    ["a range with a protocol", "EXPOSE 7000-7002/tcp", exposed(7000, " (first of 7000-7002)")],
    ["a one-port range", "EXPOSE 7000-7000", exposed(7000)],
    ["leading zeros read as the number", "EXPOSE 03000", exposed(3000)],
    ["$PORT", "EXPOSE $PORT", VARIABLE],
    ["${PORT}", "EXPOSE ${PORT}", VARIABLE],
    ["${PORT:-3000}", "EXPOSE ${PORT:-3000}", VARIABLE],
    ["variable after a literal port: the line holds a variable", "EXPOSE 3000 $DEBUG_PORT", VARIABLE],
    ["variable with protocol", "EXPOSE ${PORT}/tcp", VARIABLE],
    ["port 0", "EXPOSE 0", invalid("0")],
    ["port above 65535", "EXPOSE 70000", invalid("70000")],
    ["port 65535 is fine", "EXPOSE 65535", exposed(65535)],
    ["not a number", "EXPOSE http", invalid("http")],
    ["unknown protocol", "EXPOSE 80/http", invalid("80/http")],
    ["backwards range", "EXPOSE 8010-8000", invalid("8010-8000")],
    ["range past 65535", "EXPOSE 65530-65540", invalid("65530-65540")],
    ["no argument", "EXPOSE", { port: 8000, source: "default", reason: "EXPOSE names no port, default 8000" }],
    ["commented-out EXPOSE", lines("FROM node", "# EXPOSE 4000", "EXPOSE 3000"), exposed(3000)],
    ["indented comment", lines("FROM node", "   # EXPOSE 4000"), NONE],
    ["EXPOSE inside an earlier build stage counts", lines("FROM node AS build", "EXPOSE 5000", "RUN make", "FROM nginx", "EXPOSE 80"), exposed(5000)],
    ["ONBUILD EXPOSE is for a later image", lines("FROM node", "ONBUILD EXPOSE 4000", "EXPOSE 3000"), exposed(3000)],
    ["EXPOSE in a RUN argument is not an instruction", lines("FROM node", "RUN echo EXPOSE 4000", "EXPOSE 3000"), exposed(3000)],
    ["continuation joins ports", lines("FROM node", "EXPOSE \\", "  3000 \\", "  9229"), exposed(3000)],
    ["continuation with trailing spaces after the backslash", lines("EXPOSE \\   ", "3000"), exposed(3000)],
    ["comment and blank lines inside a continuation are dropped", lines("EXPOSE \\", "# the app", "", "  3000"), exposed(3000)],
    ["a continued RUN hides EXPOSE text on its next line", lines("RUN echo \\", "EXPOSE 4000", "EXPOSE 3000"), exposed(3000)],
    ["escape directive: backtick continues lines", lines("# escape=`", "FROM mcr.microsoft.com/windows", "EXPOSE `", "  3000"), exposed(3000)],
    ["escape directive with spaces and case", lines("#  Escape = `", "RUN echo `", "EXPOSE 4000", "EXPOSE 3000"), exposed(3000)],
    ["with backtick escape, a backslash does not continue", lines("# escape=`", "RUN dir c:\\", "EXPOSE 3000"), exposed(3000)],
    ["a directive after the first instruction is a comment", lines("FROM node", "# escape=`", "RUN echo `", "EXPOSE 3000"), exposed(3000)],
    ["syntax directive is passed over", lines("# syntax=docker/dockerfile:1", "FROM node", "EXPOSE 3000"), exposed(3000)],
    ["heredoc body is data", lines("FROM node", "RUN <<EOF", "EXPOSE 4000", "EOF", "EXPOSE 3000"), exposed(3000)],
    ["quoted heredoc delimiter in COPY", lines("COPY <<'END' /etc/app.conf", "EXPOSE 4000", "END", "EXPOSE 3000"), exposed(3000)],
    ["<<- heredoc ends at a tab-indented delimiter", lines("RUN <<-EOT", "\tEXPOSE 4000", "\tEOT", "EXPOSE 3000"), exposed(3000)],
    ["a heredoc-looking string in EXPOSE-free RUN arguments", lines("RUN cat <<EOF > /x", "port", "EOF", "EXPOSE 3000"), exposed(3000)],
    ["EXPOSE3000 is not the EXPOSE keyword", "EXPOSE3000", NONE],
  ])("%s", (_name, text, expected) => {
    expect(probedPort(text)).toEqual(expected);
  });
});
