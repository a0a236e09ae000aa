import { describe, expect, it } from "vitest";
import { addressBucket } from "../../src/http/client-address";

describe("addressBucket: the limits count an IPv6 client by its /64", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    [" 203.0.113.7 ", "203.0.113.7"],
    ["2001:db8:a:b:1:2:3:4", "2001:db8:a:b::/64"],
    ["2001:db8:a:b:ffff:ffff:ffff:ffff", "2001:db8:a:b::/64"],
    ["2001:0DB8:000A:000B:0000:0000:0000:0001", "2001:db8:a:b::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:1::", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["::ffff:cb00:7107", "203.0.113.7"],
    ["64:ff9b::203.0.113.7", "64:ff9b:0:0::/64"],
    ["unknown", "unknown"],
    ["2001:db8::1::2", "2001:db8::1::2"],
    ["2001:db8:a:b:1:2:3:4:5", "2001:db8:a:b:1:2:3:4:5"],
    ["2001:db8:zz::1", "2001:db8:zz::1"],
    ["::ffff:300.1.1.1", "::ffff:300.1.1.1"],
  ])("%s -> %s", (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });

  it("puts two addresses of one /64 in one bucket and a neighbouring /64 in another", () => {
    expect(addressBucket("2001:db8:1:2::a")).toBe(addressBucket("2001:db8:1:2:dead:beef:0:1"));
    expect(addressBucket("2001:db8:1:3::a")).not.toBe(addressBucket("2001:db8:1:2::a"));
  });
});
