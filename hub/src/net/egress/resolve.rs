//! How a host name becomes addresses: the system's resolver
//! (`getaddrinfo`, through `tokio::net::lookup_host`) by default, or —
//! when `WS_EGRESS_DNS=ip:port` is set — that DNS server asked directly,
//! with no cache, so a new answer (a rebinding one too) is seen on the
//! next connection. The tests point the hub at their own DNS server this
//! way.
//!
//! Resolution happens once per new connection, and only the addresses it
//! answers are checked and connected to: nothing here caches an answer.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig,
    ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::TokioResolver;

/// The variable naming a DNS server to ask instead of the system's
/// resolver.
pub const DNS_ENV: &str = "WS_EGRESS_DNS";

/// How long one query to the configured DNS server may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Where names are resolved.
#[derive(Clone, Default)]
pub enum Resolver {
    /// The system's resolver.
    #[default]
    System,
    /// One DNS server, asked over UDP (then TCP), without a cache.
    Server {
        /// The server's address, as configured.
        at: SocketAddr,
        /// The client.
        client: Arc<TokioResolver>,
    },
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::System => f.write_str("Resolver::System"),
            Self::Server { at, .. } => write!(f, "Resolver::Server({at})"),
        }
    }
}

/// Why a resolver could not be made, or a name not resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// `WS_EGRESS_DNS` is not `ip:port`, or the client could not be made.
    #[error("{DNS_ENV}: {0}")]
    Config(String),
    /// The lookup failed.
    #[error("{host} does not resolve: {why}")]
    Lookup { host: String, why: String },
    /// The lookup answered nothing.
    #[error("{host} resolves to no address")]
    Empty { host: String },
}

impl Resolver {
    /// The server `WS_EGRESS_DNS` names, else the system's resolver.
    pub fn from_env() -> Result<Self, ResolveError> {
        match std::env::var(DNS_ENV) {
            Err(_) => Ok(Self::System),
            Ok(text) if text.trim().is_empty() => Ok(Self::System),
            Ok(text) => {
                let at: SocketAddr = text.trim().parse().map_err(|_| {
                    ResolveError::Config(format!(
                        "`{}` is not an ip:port",
                        exchange::text::clip(text.trim(), 64)
                    ))
                })?;
                Self::server(at)
            }
        }
    }

    /// A resolver asking the DNS server at `at` only, caching nothing.
    pub fn server(at: SocketAddr) -> Result<Self, ResolveError> {
        let connection = |mut c: ConnectionConfig| {
            c.port = at.port();
            c
        };
        let mut server = NameServerConfig::udp_and_tcp(at.ip());
        server.connections = vec![
            connection(ConnectionConfig::udp()),
            connection(ConnectionConfig::tcp()),
        ];
        let config = ResolverConfig::from_name_servers(vec![server]);
        let mut options = ResolverOpts::default();
        options.cache_size = 0;
        options.positive_max_ttl = Some(Duration::ZERO);
        options.negative_max_ttl = Some(Duration::ZERO);
        options.use_hosts_file = ResolveHosts::Never;
        options.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        options.timeout = QUERY_TIMEOUT;
        options.attempts = 1;
        options.ndots = 0;
        let client = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
            .with_options(options)
            .build()
            .map_err(|e| ResolveError::Config(e.to_string()))?;
        Ok(Self::Server {
            at,
            client: Arc::new(client),
        })
    }

    /// The addresses of `host` (a name, not an IP literal).
    pub async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, ResolveError> {
        let failed = |why: String| ResolveError::Lookup {
            host: exchange::text::clip(host, 100),
            why,
        };
        let ips: Vec<IpAddr> = match self {
            Self::System => tokio::net::lookup_host((host, 0))
                .await
                .map_err(|e| failed(e.to_string()))?
                .map(|a| a.ip())
                .collect(),
            Self::Server { client, .. } => client
                .lookup_ip(host)
                .await
                .map_err(|e| failed(e.to_string()))?
                .iter()
                .collect(),
        };
        if ips.is_empty() {
            return Err(ResolveError::Empty {
                host: exchange::text::clip(host, 100),
            });
        }
        Ok(ips)
    }
}
