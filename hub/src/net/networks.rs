//! Networks an operator names in an environment variable: comma-separated
//! CIDRs or bare addresses (one host each), e.g. `10.0.0.0/8, 127.0.0.1`.
//! The hub reads such lists — the balancers it trusts
//! (`WS_TRUSTED_PROXIES`), who may scrape `/metrics` (`WS_METRICS_ALLOW`),
//! the private networks each egress purpose may reach
//! (`WS_MEMBER_NETWORKS`, `WS_IDENTITY_NETWORKS`, `WS_ONBOARD_NETWORKS`,
//! `crate::net::egress::policy`) — and each stops the hub at start when an entry
//! is not a network, naming the variable and the entry.

use std::net::IpAddr;

use ipnet::IpNet;

/// A list of networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Networks(Vec<IpNet>);

impl Networks {
    /// The list in variable `var`, `default` when it is unset.
    pub fn from_env(var: &str, default: Networks) -> Result<Self, String> {
        match std::env::var(var) {
            Err(_) => Ok(default),
            Ok(list) => Self::parse(var, &list),
        }
    }

    /// `list` as read from variable `var` (named in the error).
    pub fn parse(var: &str, list: &str) -> Result<Self, String> {
        list.split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|e| {
                e.parse::<IpNet>()
                    .or_else(|_| e.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!(
                            "{var}: `{}` is not an address or a CIDR",
                            exchange::text::clip(e, 64)
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Loopback, IPv4 and IPv6.
    pub fn loopback() -> Self {
        Self(vec![
            "127.0.0.0/8".parse().expect("a literal CIDR"),
            "::1/128".parse().expect("a literal CIDR"),
        ])
    }

    /// Whether `ip` is in one of the networks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|n| n.contains(&ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_cidrs_or_addresses_and_a_bad_one_is_named() {
        let n = Networks::parse("WS_X", " 10.0.0.0/8, 192.0.2.7 ,, ::1").expect("parses");
        assert!(n.contains("10.1.2.3".parse().expect("ip")));
        assert!(n.contains("192.0.2.7".parse().expect("ip")));
        assert!(!n.contains("192.0.2.8".parse().expect("ip")));
        assert!(n.contains("::1".parse().expect("ip")));
        let e = Networks::parse("WS_X", "10.0.0.0/8, nonsense").expect_err("bad");
        assert_eq!(e, "WS_X: `nonsense` is not an address or a CIDR");
        assert_eq!(
            Networks::parse("WS_X", " ").expect("empty"),
            Networks::default()
        );
    }

    #[test]
    fn loopback_is_both_families() {
        let l = Networks::loopback();
        assert!(l.contains("127.8.9.10".parse().expect("ip")));
        assert!(l.contains("::1".parse().expect("ip")));
        assert!(!l.contains("10.0.0.1".parse().expect("ip")));
    }
}
