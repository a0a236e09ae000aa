// Throwaway keys generated with openssl for these tests only (never used anywhere): a 1024-bit RSA
// key in the traditional "RSA PRIVATE KEY" form and a P-256 "EC PRIVATE KEY".

export const RSA_PEM = `-----BEGIN RSA PRIVATE KEY-----
MIICWwIBAAKBgQDsjrwfpNbIBVJ2KSDNbBtD3v40zreum0Wd4vyxThIlqC9mn6fE
sEF0mvc5hZwxhAwdw5L6rSrK5fta7ODepYbr3WXm/y9zqG5KDn8/6CkYLk1ikZ1K
jFWCJQV0OXoYTWXCznwyRoISQR32XYbhBJ1UXxroo66w/DuB8B5DSKSaWQIDAQAB
AoGAQFyJdLadtWg1Sm7gPOPn+yxlz6pasYgPheinRfpu144N74cK12n5NSegkib3
G0XJIiP/DnMlDHVMUS3X9NvmfCoP9Yj5++kNU7MSeVIF90yNvj1I160sGbhylzH+
Jea+wkgJeNZ4IKQk09Zisqf/mmFmgYg8uHKIyJTrBHfGx20CQQD+yu6WA00F063f
6kO/csf7UdNXNzSMnkhTmbNVTy06Dbt/mvJlDZMTuCHP2jgc1BmlaNwoa8N6m6W+
nq/tGbhnAkEA7a2u7rp1lXps2wHc7OWOvsa+NDIDemZPrQknlCL+pU1cZAgD6Ynf
b++SYPzbhK0DLZKX71WVAYrL9biyV85fPwJAAkw0MJghBq9s/vru13gig4quXDf8
OlRnFJHrQxausrpS+YidLPodXG0pqOUv4lqrTImQirDGF4H10a0+quWzewJAKBtd
4JUAUIgHJHHNCQC3tMOuxvoFkjr/iPB5iErbc6N5Srv7hQYp+SaRKeKhXGMhnSgW
kWF8snTsc/uFxMFjWwJADpnV07HShF/M1dAUdTZlOL/B2jzTl/3wc3Go6w8sVT3N
4wNdTSZBttJBoC+u+wbqgQmS4OUFl1q9cIGfzC8fkg==
-----END RSA PRIVATE KEY-----`;

export const EC_PEM = `-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIMI6zy2lIpPrDulUFFXm3yiQKCXwphJtIl0O2S0ahRtXoAoGCCqGSM49
AwEHoUQDQgAE0VtE1zgdXp/DX7iyoGElCKgulL11vyh0Y3V/6hVK44Wg+n+jNqRv
W0Nlgc5lTkR3QmMP03RIjxlblL0xlB88Cg==
-----END EC PRIVATE KEY-----`;
