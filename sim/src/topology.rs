//! The network topology as a pure graph: a 3D torus, mesh or mix of both.
//!
//! A node is one router at coordinates `(x, y, z)`; node index
//! `x + dims[0] * (y + dims[1] * z)`. Each router has the same ports,
//! numbered deterministically: for every dimension of size > 1, in the order
//! x, y, z, first its `+` port then its `-` port; then the `local_ports` local
//! (network-interface) ports. The default 8x4x4 torus with one local port has
//! ports `0 x+, 1 x-, 2 y+, 3 y-, 4 z+, 5 z-, 6 l0`.
//!
//! A link leaves a router through its `d+` port and enters the neighbour at
//! coordinate `+1` through that neighbour's `d-` port (and symmetrically).
//! On a torus dimension the link from coordinate `k-1` going `+` to `0`, and
//! the link from `0` going `-` to `k-1`, are the *dateline* (wrap) links of
//! that ring. On a mesh dimension the `+` port of the last router and the `-`
//! port of the first router exist but are unconnected (routing never uses them).

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest size of one dimension in hardware (4-bit coordinates in the packet header).
pub const MAX_HW_DIM: usize = 16;
/// Largest size of one dimension in the network simulator (5-bit coordinates:
/// the header's reserved coordinate bits carry bit 4, see `router::header_fields`).
pub const MAX_DIM: usize = 32;
/// Largest number of local (network-interface) ports per router.
pub const MAX_LOCAL_PORTS: usize = 4;
/// Largest number of router ports: 6 torus ports + 4 local ports.
pub const MAX_PORTS: usize = 6 + MAX_LOCAL_PORTS;

/// The shape of the network. Validate with [`Topology::validate`] before use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Topology {
    /// Routers per dimension `[x, y, z]`, each 1..=16 (1..=32 in simulation only);
    /// a dimension of size 1 has no ports. Text form `8x4x4`.
    #[serde(with = "dims_text")]
    pub dims: [usize; 3],
    /// Per dimension: `true` = torus (wrap links), `false` = mesh. Text
    /// form one letter per dimension, `t` (torus) or `m` (mesh): `ttm`.
    #[serde(with = "wrap_text")]
    pub wrap: [bool; 3],
    /// Network-interface ports per router, 1..=4 (ejection by the header's fpga field).
    pub local_ports: usize,
}

/// What a router port is connected to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// A network port of dimension `dim` (0 = x, 1 = y, 2 = z), `+` or `-` direction.
    Dir { dim: usize, plus: bool },
    /// Local (network-interface) port number `n`.
    Local(usize),
}

impl Default for Topology {
    /// The ExaNeSt prototype: an 8x4x4 torus, one local port per router.
    fn default() -> Self {
        Topology {
            dims: [8, 4, 4],
            wrap: [true; 3],
            local_ports: 1,
        }
    }
}

/// Serde form of [`Topology::dims`]: `"8x4x4"` (as in `--point dims=8x4x4`).
pub mod dims_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &[usize; 3], s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}x{}x{}", d[0], d[1], d[2]))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[usize; 3], D::Error> {
        let v = String::deserialize(d)?;
        let parts: Vec<&str> = v.split('x').collect();
        if parts.len() != 3 {
            return Err(D::Error::custom(format!("`{v}` is not AxBxC")));
        }
        let mut dims = [0; 3];
        for (i, s) in parts.iter().enumerate() {
            dims[i] = s
                .parse()
                .map_err(|_| D::Error::custom(format!("`{s}` in `{v}` is not an integer")))?;
        }
        Ok(dims)
    }
}

/// Serde form of [`Topology::wrap`]: `"ttm"`, `t` torus or `m` mesh per dimension.
pub mod wrap_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(w: &[bool; 3], s: S) -> Result<S::Ok, S::Error> {
        let t: String = w.iter().map(|&w| if w { 't' } else { 'm' }).collect();
        s.serialize_str(&t)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[bool; 3], D::Error> {
        let v = String::deserialize(d)?;
        let c: Vec<char> = v.chars().collect();
        if c.len() != 3 || c.iter().any(|&x| x != 't' && x != 'm') {
            return Err(D::Error::custom(format!(
                "`{v}` must be three letters t (torus) or m (mesh), e.g. ttm"
            )));
        }
        Ok([c[0] == 't', c[1] == 't', c[2] == 't'])
    }
}

const DIM_NAMES: [&str; 3] = ["x", "y", "z"];

impl Topology {
    /// A validated topology.
    pub fn new(dims: [usize; 3], wrap: [bool; 3], local_ports: usize) -> Result<Self> {
        let t = Topology {
            dims,
            wrap,
            local_ports,
        };
        t.validate()?;
        Ok(t)
    }

    /// Check every field against its rule, for simulation (dimensions up to 32).
    /// Hardware additionally needs [`Topology::check_hardware`].
    pub fn validate(&self) -> Result<()> {
        for (d, &k) in self.dims.iter().enumerate() {
            if !(1..=MAX_DIM).contains(&k) {
                bail!(
                    "topology.dims[{d}] ({}) = {k}: must be 1..={MAX_HW_DIM} (4-bit coordinates; up to {MAX_DIM} in simulation only)",
                    DIM_NAMES[d]
                );
            }
        }
        if !(1..=MAX_LOCAL_PORTS).contains(&self.local_ports) {
            bail!(
                "topology.local_ports = {}: must be 1..={MAX_LOCAL_PORTS} (2-bit fpga field)",
                self.local_ports
            );
        }
        Ok(())
    }

    /// Check the topology can be built in hardware: every dimension 1..=16 (4-bit coordinates).
    pub fn check_hardware(&self) -> Result<()> {
        self.validate()?;
        for (d, &k) in self.dims.iter().enumerate() {
            if k > MAX_HW_DIM {
                bail!(
                    "topology.dims[{d}] ({}) = {k}: must be 1..={MAX_HW_DIM} for hardware (4-bit coordinates in the header)",
                    DIM_NAMES[d]
                );
            }
        }
        Ok(())
    }

    /// Whether coordinates need 5 bits (some dimension above 16; simulation only).
    pub fn wide_coords(&self) -> bool {
        self.dims.iter().any(|&k| k > MAX_HW_DIM)
    }

    /// Number of routers.
    pub fn num_nodes(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    /// Number of dimensions with size > 1 (each has a `+` and a `-` port).
    pub fn active_dims(&self) -> usize {
        self.dims.iter().filter(|&&k| k > 1).count()
    }

    /// Number of ports per router (network ports then local ports).
    pub fn num_ports(&self) -> usize {
        2 * self.active_dims() + self.local_ports
    }

    /// Number of network (non-local) ports per router.
    pub fn num_dir_ports(&self) -> usize {
        2 * self.active_dims()
    }

    /// Whether dimension `dim` is a torus dimension that has links (size > 1 and wrap).
    pub fn is_torus_dim(&self, dim: usize) -> bool {
        self.dims[dim] > 1 && self.wrap[dim]
    }

    /// The port of dimension `dim` in direction `plus`, if that dimension has ports.
    pub fn dir_port(&self, dim: usize, plus: bool) -> Option<usize> {
        if self.dims[dim] <= 1 {
            return None;
        }
        let before = self.dims[..dim].iter().filter(|&&k| k > 1).count();
        Some(2 * before + usize::from(!plus))
    }

    /// The port number of local port `n` (`n < local_ports`).
    pub fn local_port(&self, n: usize) -> usize {
        self.num_dir_ports() + n
    }

    /// What port `port` is (`port < num_ports()`).
    pub fn port_kind(&self, port: usize) -> PortKind {
        let nd = self.num_dir_ports();
        if port >= nd {
            return PortKind::Local(port - nd);
        }
        let mut seen = 0;
        for dim in 0..3 {
            if self.dims[dim] > 1 {
                if port / 2 == seen {
                    return PortKind::Dir {
                        dim,
                        plus: port.is_multiple_of(2),
                    };
                }
                seen += 1;
            }
        }
        unreachable!("port {port} below num_dir_ports {nd}")
    }

    /// A short port name: `x+`, `y-`, `l0`.
    pub fn port_name(&self, port: usize) -> String {
        match self.port_kind(port) {
            PortKind::Dir { dim, plus } => {
                format!("{}{}", DIM_NAMES[dim], if plus { '+' } else { '-' })
            }
            PortKind::Local(n) => format!("l{n}"),
        }
    }

    /// Coordinates `[x, y, z]` of node `node`.
    pub fn coords(&self, node: usize) -> [usize; 3] {
        let [kx, ky, _] = self.dims;
        [node % kx, (node / kx) % ky, node / (kx * ky)]
    }

    /// Node index of coordinates `c` (each within its dimension).
    pub fn node_at(&self, c: [usize; 3]) -> usize {
        c[0] + self.dims[0] * (c[1] + self.dims[1] * c[2])
    }

    /// The router and input port reached through `port` of `node`, or `None`
    /// for a local port or an unconnected mesh-boundary port.
    pub fn neighbour(&self, node: usize, port: usize) -> Option<(usize, usize)> {
        let PortKind::Dir { dim, plus } = self.port_kind(port) else {
            return None;
        };
        let k = self.dims[dim];
        let mut c = self.coords(node);
        let here = c[dim];
        c[dim] = if plus {
            if here + 1 < k {
                here + 1
            } else if self.wrap[dim] {
                0
            } else {
                return None;
            }
        } else if here > 0 {
            here - 1
        } else if self.wrap[dim] {
            k - 1
        } else {
            return None;
        };
        let back = self.dir_port(dim, !plus).expect("dimension has ports");
        Some((self.node_at(c), back))
    }

    /// Whether the link leaving `node` through `port` is its ring's dateline (wrap) link.
    pub fn is_dateline(&self, node: usize, port: usize) -> bool {
        match self.port_kind(port) {
            PortKind::Dir { dim, plus } => {
                let k = self.dims[dim];
                let here = self.coords(node)[dim];
                self.is_torus_dim(dim) && if plus { here == k - 1 } else { here == 0 }
            }
            PortKind::Local(_) => false,
        }
    }

    /// Number of router-to-router links (each direction counted once).
    pub fn num_links(&self) -> usize {
        (0..self.num_nodes())
            .map(|n| {
                (0..self.num_dir_ports())
                    .filter(|&p| self.neighbour(n, p).is_some())
                    .count()
            })
            .sum()
    }

    /// Shortest-path hop count between two routers under dimension-order routing
    /// with ties to `+` (the same on every path, so independent of the order).
    pub fn hops(&self, a: usize, b: usize) -> usize {
        let (ca, cb) = (self.coords(a), self.coords(b));
        (0..3)
            .map(|d| {
                let k = self.dims[d];
                let fwd = (cb[d] + k - ca[d]) % k;
                if self.wrap[d] {
                    fwd.min(k - fwd)
                } else {
                    ca[d].abs_diff(cb[d])
                }
            })
            .sum()
    }
}

/// The rule a routing order follows, in words (for error messages).
pub const DIM_ORDER_RULE: &str =
    "must be a permutation of x, y, z such as \"zyx\" (first letter routed first)";

/// Parse a routing order such as `"zyx"` into `dim_order` (`[2, 1, 0]`):
/// the one parser of the config key, the point text and the simulator.
pub fn parse_dim_order(s: &str) -> Result<[usize; 3]> {
    let mut o = [0; 3];
    let chars: Vec<char> = s.chars().collect();
    if chars.len() != 3 {
        bail!("topology.dim_order = {s:?}: {DIM_ORDER_RULE}");
    }
    for (i, ch) in chars.iter().enumerate() {
        o[i] = match ch.to_ascii_lowercase() {
            'x' => 0,
            'y' => 1,
            'z' => 2,
            _ => bail!("topology.dim_order = {s:?}: {DIM_ORDER_RULE}"),
        };
    }
    let mut sorted = o;
    sorted.sort_unstable();
    if sorted != [0, 1, 2] {
        bail!("topology.dim_order = {s:?}: {DIM_ORDER_RULE}");
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_port_numbering() {
        let t = Topology::default();
        t.validate().unwrap();
        assert_eq!(t.num_ports(), 7);
        let names: Vec<String> = (0..7).map(|p| t.port_name(p)).collect();
        assert_eq!(names, ["x+", "x-", "y+", "y-", "z+", "z-", "l0"]);
        assert_eq!(t.dir_port(1, false), Some(3));
        assert_eq!(t.local_port(0), 6);
    }

    #[test]
    fn size_one_dimension_has_no_ports() {
        let t = Topology::new([4, 1, 2], [true, true, false], 2).unwrap();
        assert_eq!(t.num_ports(), 6);
        assert_eq!(t.dir_port(1, true), None);
        assert_eq!(t.port_kind(2), PortKind::Dir { dim: 2, plus: true });
        assert_eq!(t.port_kind(5), PortKind::Local(1));
        assert_eq!(t.port_name(3), "z-");
    }

    #[test]
    fn neighbours_are_symmetric_and_datelines_are_wraps() {
        let t = Topology::new([4, 3, 2], [true, false, true], 1).unwrap();
        let mut datelines = 0;
        for n in 0..t.num_nodes() {
            for p in 0..t.num_dir_ports() {
                if let Some((m, q)) = t.neighbour(n, p) {
                    assert_eq!(t.neighbour(m, q), Some((n, p)), "node {n} port {p}");
                    assert_eq!(t.hops(n, m), 1);
                }
                if t.is_dateline(n, p) {
                    datelines += 1;
                    let PortKind::Dir { dim, .. } = t.port_kind(p) else {
                        panic!()
                    };
                    assert!(t.wrap[dim]);
                }
            }
        }
        // x ring (size 4): 2 dateline links per ring, 3*2 rings; z ring (size 2): 2 per ring, 4*3 rings.
        assert_eq!(datelines, 2 * 6 + 2 * 12);
        // mesh y: the boundary ports are unconnected
        let top = t.node_at([0, 2, 0]);
        assert_eq!(t.neighbour(top, t.dir_port(1, true).unwrap()), None);
        // 24 nodes x 2 x-links, 8 y-columns x 4 y-links, 24 nodes x 2 z-links
        assert_eq!(t.num_links(), 2 * 24 + 4 * 8 + 2 * 24);
    }

    #[test]
    fn rejects_bad_values_naming_the_key() {
        let e = Topology::new([33, 1, 1], [true; 3], 1).unwrap_err();
        assert!(e.to_string().contains("topology.dims[0]"), "{e}");
        let big = Topology::new([32, 1, 17], [true; 3], 1).unwrap();
        assert!(big.wide_coords());
        let e = big.check_hardware().unwrap_err();
        assert!(e.to_string().contains("topology.dims[0] (x) = 32"), "{e}");
        assert!(Topology::default().check_hardware().is_ok());
        let e = Topology::new([2, 2, 2], [true; 3], 0).unwrap_err();
        assert!(e.to_string().contains("topology.local_ports = 0"), "{e}");
    }

    #[test]
    fn hops_take_the_short_way_round() {
        let t = Topology::new([8, 1, 1], [true, false, false], 1).unwrap();
        assert_eq!(t.hops(0, 7), 1);
        assert_eq!(t.hops(0, 4), 4);
        let m = Topology::new([8, 1, 1], [false; 3], 1).unwrap();
        assert_eq!(m.hops(0, 7), 7);
    }
}
