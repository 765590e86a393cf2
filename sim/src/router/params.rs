//! Parameters of one router (the same for every router of a network).

use crate::topology::Topology;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Largest number of VCs per class.
pub const MAX_VCS_PER_CLASS: usize = 8;
/// Largest number of VCs on a link (classes x VCs per class).
pub const MAX_VCS: usize = 2 * MAX_VCS_PER_CLASS;
/// Largest input buffer per VC, in flits.
pub const MAX_BUFFER_FLITS: usize = 1024;

/// Router parameters. The ports follow from `topology` (see [`crate::topology`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterParams {
    /// The network this router sits in: ports, ring sizes, torus/mesh per dimension.
    pub topology: Topology,
    /// Routing order, a permutation of `[0, 1, 2]` (0 = x); default `[2, 1, 0]` = Z, Y, X.
    /// Text form the letters in routing order: `zyx`.
    #[serde(with = "dim_order_text")]
    pub dim_order: [usize; 3],
    /// Priority classes, 1 or 2 (class 1 has strict priority over class 0).
    pub classes: usize,
    /// Virtual channels per class, 1..=8 (>= 2 on a torus for deadlock freedom).
    pub vcs_per_class: usize,
    /// Input buffer depth per VC in flits, max_packet_flits..=1024 (also the initial credits).
    pub buffer_flits: usize,
    /// Flit width: 64, 128 or 256 bits (a 128-bit header takes two 64-bit flits).
    pub flit_bits: usize,
    /// Longest packet in flits (header, payload and footer); a head needs this many credits.
    pub max_packet_flits: usize,
    /// When a packet takes the upper half of its class's VCs on a torus ring.
    pub dateline: Dateline,
    /// Which way a packet exactly half a ring (of even size) away goes.
    pub tie_break: TieBreak,
    /// Which VC of the eligible half a head takes on the next link.
    pub vc_select: VcSelect,
    /// The switch allocator (see [`crate::router`], steps 2-3).
    pub allocator: Allocator,
    /// iSLIP iterations, 1..=[`MAX_ALLOC_ITERATIONS`] (read by `islip` only).
    pub alloc_iterations: usize,
    /// Width of the RTL's drop and error counters (`dropped_packets`,
    /// `flit_errors`, `credit_errors`), 1..=[`MAX_COUNTER_BITS`]: they wrap
    /// modulo `2^counter_bits` (the ports stay 32 bits, the bits above
    /// are 0). The model counts without bound; [`RouterParams::counter_value`]
    /// is what the RTL shows.
    pub counter_bits: usize,
}

/// Widest drop and error counter (the RTL's counter ports are 32 bits).
pub const MAX_COUNTER_BITS: usize = 32;

/// Most iSLIP iterations.
pub const MAX_ALLOC_ITERATIONS: usize = 4;

/// `router.allocator`: how the input ports are matched to the output ports each cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Allocator {
    /// Separable input-first: each input port picks one requesting VC, then
    /// each output port picks one of the inputs that picked it (one round).
    #[default]
    Separable,
    /// iSLIP: each input port requests every output one of its VCs wants;
    /// outputs grant, inputs accept, repeated `alloc_iterations` times over
    /// the still unmatched ports; then the matched input picks its VC.
    Islip,
    /// Wavefront: a maximal matching of the same requests in one pass, the
    /// diagonals of the input x output matrix in turn from a rotating one.
    Wavefront,
}

impl Allocator {
    /// Every value, in declaration order (the order of `NAMES`).
    pub const ALL: [Self; 3] = [Allocator::Separable, Allocator::Islip, Allocator::Wavefront];
    /// The config values, in declaration order.
    pub const NAMES: &'static [&'static str] = &["separable", "islip", "wavefront"];

    /// The config value of `self`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// `router.dateline`: the VC-half rule of a torus ring (both are deadlock-free;
/// [`crate::deadlock`] checks it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dateline {
    /// Lower half until the packet takes the wrap link, upper half on it and
    /// after it (the upper + VCs are used only on the links from the wrap on).
    Wrap,
    /// The half is chosen once, on entering the dimension: upper for the
    /// whole dimension iff the path will cross the wrap link, else lower.
    #[default]
    Entry,
}

/// `router.tie_break`: the direction of a packet `k/2` away on a ring of even size `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// Always `+` (loads the `+` ring more than the `-` ring).
    Plus,
    /// `+` when the destination coordinate is even, else `-`: deterministic
    /// per flow, and each ring direction carries half of the tie traffic.
    #[default]
    Parity,
}

/// `router.vc_select`: the output VC a head takes within its eligible set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VcSelect {
    /// One VC fixed per destination (`lo + (x + y + z + fpga) mod n`): every
    /// packet of a flow takes the same VCs, so flows stay in order (the NI's
    /// receive path completes a transfer on its `last` packet and relies on it).
    #[default]
    Flow,
    /// The lowest-numbered VC of the set that is free with room for a whole
    /// packet: less head-of-line blocking, but a later packet of a flow can
    /// overtake an earlier one (for order-insensitive traffic only).
    Free,
}

impl Dateline {
    /// Every value, in declaration order (the order of `NAMES`).
    pub const ALL: [Self; 2] = [Dateline::Wrap, Dateline::Entry];
    /// The config values, in declaration order.
    pub const NAMES: &'static [&'static str] = &["wrap", "entry"];

    /// The config value of `self`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl TieBreak {
    /// Every value, in declaration order (the order of `NAMES`).
    pub const ALL: [Self; 2] = [TieBreak::Plus, TieBreak::Parity];
    /// The config values, in declaration order.
    pub const NAMES: &'static [&'static str] = &["plus", "parity"];

    /// The config value of `self`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl VcSelect {
    /// Every value, in declaration order (the order of `NAMES`).
    pub const ALL: [Self; 2] = [VcSelect::Flow, VcSelect::Free];
    /// The config values, in declaration order.
    pub const NAMES: &'static [&'static str] = &["flow", "free"];

    /// The config value of `self`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Serde form of [`RouterParams::dim_order`]: `"zyx"` (the dimensions in routing order).
pub mod dim_order_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(o: &[usize; 3], s: S) -> Result<S::Ok, S::Error> {
        let t: String = o.iter().map(|&d| ['x', 'y', 'z'][d.min(2)]).collect();
        s.serialize_str(&t)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[usize; 3], D::Error> {
        let v = String::deserialize(d)?;
        crate::topology::parse_dim_order(&v).map_err(|e| D::Error::custom(format!("{e:#}")))
    }
}

/// The `[router]` keys of a config: the router parameters a user chooses
/// (the rest of [`RouterParams`] follows from the topology and the packet
/// format). A new router key is a field here, its field in
/// [`RouterParams`] (set in [`RouterParams::from_keys`]), its row in the
/// hardware-limits table when the RTL bounds it, and its line in the
/// default config; the config reader and elaboration take it from here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterKeys {
    /// Priority classes.
    pub classes: u32,
    /// Virtual channels per class.
    pub vcs_per_class: u32,
    /// Buffer per VC, flits.
    pub buffer_flits: u32,
    /// VC half on a torus ring ([`Dateline::NAMES`]): "wrap" (upper from the
    /// wrap link on) or "entry" (chosen on entering the dimension).
    pub dateline: String,
    /// Direction of a packet half a ring away ([`TieBreak::NAMES`]): "plus" or "parity".
    pub tie_break: String,
    /// Output VC of a head within its half ([`VcSelect::NAMES`]): "flow"
    /// (one per flow, in order) or "free".
    pub vc_select: String,
    /// Switch allocator ([`Allocator::NAMES`]): "separable", "islip" or "wavefront".
    pub allocator: String,
    /// iSLIP iterations, 1..=4 (read by "islip" only).
    pub alloc_iterations: u32,
    /// Drop and error counter width in the RTL, 1..=32 bits (wrapping).
    pub counter_bits: u32,
}

/// A `[router]` rule key whose value is none of its names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRuleName {
    /// The key (`router.dateline`, …).
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// The names it takes.
    pub names: &'static [&'static str],
}

impl std::fmt::Display for BadRuleName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quoted: Vec<String> = self.names.iter().map(|n| format!("{n:?}")).collect();
        write!(f, "must be one of {}", quoted.join(", "))
    }
}

/// The value of `all` named `text` among `names` (same order).
fn by_name<T: Copy>(
    key: &'static str,
    text: &str,
    names: &'static [&'static str],
    all: &[T],
) -> Result<T, BadRuleName> {
    names
        .iter()
        .position(|&n| n == text)
        .map(|i| all[i])
        .ok_or_else(|| BadRuleName {
            key,
            value: text.to_string(),
            names,
        })
}

/// A router at one node of its network: the parameter point of
/// `exanet cosim router` (`node` picks which datelines and mesh edges the
/// bench's router sees; one RTL module serves every node).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterPoint {
    /// The router.
    pub router: RouterParams,
    /// Node index in the network (see [`Topology::coords`]).
    pub node: usize,
}

impl Default for RouterParams {
    /// The default router: 8x4x4 torus, Z-Y-X, 2 classes x 2 VCs, 32-flit buffers,
    /// 128-bit flits, 18-flit packets (header + 256 B payload + footer); VC
    /// half chosen on entering a dimension, ties by destination parity, one
    /// VC per flow (flows stay in order).
    fn default() -> Self {
        RouterParams {
            topology: Topology::default(),
            dim_order: [2, 1, 0],
            classes: 2,
            vcs_per_class: 2,
            buffer_flits: 32,
            flit_bits: 128,
            max_packet_flits: 18,
            dateline: Dateline::default(),
            tie_break: TieBreak::default(),
            vc_select: VcSelect::default(),
            allocator: Allocator::default(),
            alloc_iterations: 1,
            counter_bits: 16,
        }
    }
}

impl RouterParams {
    /// The router of `keys` in `topology`, routing in `dim_order`, for
    /// `flit_bits`-bit flits and packets of at most `max_packet_flits`
    /// (not yet validated: see [`RouterParams::validate`]); a rule key
    /// whose value is none of its names is a [`BadRuleName`].
    pub fn from_keys(
        keys: &RouterKeys,
        topology: Topology,
        dim_order: [usize; 3],
        flit_bits: usize,
        max_packet_flits: usize,
    ) -> Result<RouterParams, BadRuleName> {
        Ok(RouterParams {
            topology,
            dim_order,
            classes: keys.classes as usize,
            vcs_per_class: keys.vcs_per_class as usize,
            buffer_flits: keys.buffer_flits as usize,
            flit_bits,
            max_packet_flits,
            dateline: by_name(
                "router.dateline",
                &keys.dateline,
                Dateline::NAMES,
                &Dateline::ALL,
            )?,
            tie_break: by_name(
                "router.tie_break",
                &keys.tie_break,
                TieBreak::NAMES,
                &TieBreak::ALL,
            )?,
            vc_select: by_name(
                "router.vc_select",
                &keys.vc_select,
                VcSelect::NAMES,
                &VcSelect::ALL,
            )?,
            allocator: by_name(
                "router.allocator",
                &keys.allocator,
                Allocator::NAMES,
                &Allocator::ALL,
            )?,
            alloc_iterations: keys.alloc_iterations as usize,
            counter_bits: keys.counter_bits as usize,
        })
    }

    /// Check every field against its rule (deadlock freedom is checked by [`crate::deadlock`]).
    pub fn validate(&self) -> Result<()> {
        self.topology.validate()?;
        let mut o = self.dim_order;
        o.sort_unstable();
        if o != [0, 1, 2] {
            bail!(
                "router.dim_order = {:?}: must be a permutation of [0, 1, 2] (0 = x)",
                self.dim_order
            );
        }
        if !(1..=2).contains(&self.classes) {
            bail!("router.classes = {}: must be 1 or 2", self.classes);
        }
        if !(1..=MAX_VCS_PER_CLASS).contains(&self.vcs_per_class) {
            bail!(
                "router.vcs_per_class = {}: must be 1..={MAX_VCS_PER_CLASS}",
                self.vcs_per_class
            );
        }
        if ![64, 128, 256].contains(&self.flit_bits) {
            bail!(
                "packet.flit_bits = {}: must be 64, 128 or 256",
                self.flit_bits
            );
        }
        if !(1..=MAX_ALLOC_ITERATIONS).contains(&self.alloc_iterations) {
            bail!(
                "router.alloc_iterations = {}: must be 1..={MAX_ALLOC_ITERATIONS}",
                self.alloc_iterations
            );
        }
        if !(1..=MAX_COUNTER_BITS).contains(&self.counter_bits) {
            bail!(
                "router.counter_bits = {}: must be 1..={MAX_COUNTER_BITS} (the counter ports are {MAX_COUNTER_BITS} bits)",
                self.counter_bits
            );
        }
        let hf = self.header_flits();
        if self.max_packet_flits < hf {
            bail!(
                "router.max_packet_flits = {}: must be >= {hf} (the header alone takes {hf} flit(s) of {} bits)",
                self.max_packet_flits,
                self.flit_bits
            );
        }
        if self.buffer_flits < self.max_packet_flits || self.buffer_flits > MAX_BUFFER_FLITS {
            bail!(
                "router.buffer_flits = {}: must be max_packet_flits ({})..={MAX_BUFFER_FLITS} (virtual cut-through holds a whole packet)",
                self.buffer_flits,
                self.max_packet_flits
            );
        }
        Ok(())
    }

    /// The low `counter_bits` bits set: what the RTL's 32-bit counter
    /// registers keep of an increment (the hardware's mask, and the
    /// model's [`Self::counter_value`]).
    pub fn counter_mask(&self) -> u64 {
        u64::MAX >> (64 - self.counter_bits.clamp(1, 64))
    }

    /// What the RTL's drop or error counter shows after `count` events:
    /// `count mod 2^counter_bits` (the counters wrap).
    pub fn counter_value(&self, count: u64) -> u64 {
        count & self.counter_mask()
    }

    /// VCs on every link: `classes * vcs_per_class`.
    pub fn num_vcs(&self) -> usize {
        self.classes * self.vcs_per_class
    }

    /// Ports per router.
    pub fn num_ports(&self) -> usize {
        self.topology.num_ports()
    }

    /// 64-bit words per flit.
    pub fn flit_words(&self) -> usize {
        self.flit_bits / 64
    }

    /// Flits the 128-bit header (and footer) take: 2 for 64-bit flits, else 1.
    pub fn header_flits(&self) -> usize {
        if self.flit_bits == 64 {
            2
        } else {
            1
        }
    }

    /// VCs of a class before the dateline on a torus dimension: `V - V/2`
    /// (the lower half gets the odd one; every packet starts there).
    pub fn lower_vcs(&self) -> usize {
        self.vcs_per_class - self.vcs_per_class / 2
    }

    /// Flits of a packet with `bytes` payload bytes: header + payload + footer.
    pub fn packet_flits(&self, bytes: usize) -> usize {
        2 * self.header_flits() + bytes.div_ceil(self.flit_bits / 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_derived_values() {
        let p = RouterParams::default();
        p.validate().unwrap();
        assert_eq!(p.num_vcs(), 4);
        assert_eq!(p.num_ports(), 7);
        assert_eq!(p.packet_flits(256), 18);
        assert_eq!(p.packet_flits(0), 2);
        let p64 = RouterParams {
            flit_bits: 64,
            max_packet_flits: 36,
            buffer_flits: 40,
            ..p.clone()
        };
        p64.validate().unwrap();
        assert_eq!(p64.packet_flits(256), 36);
        assert_eq!(
            RouterParams {
                vcs_per_class: 3,
                ..p
            }
            .lower_vcs(),
            2
        );
    }

    /// The RTL's counters wrap at `2^counter_bits`; 32 bits is the old width.
    #[test]
    fn counter_value_wraps_at_the_counter_width() {
        let p = RouterParams::default();
        assert_eq!(p.counter_bits, 16);
        assert_eq!(p.counter_value(65_535), 65_535);
        assert_eq!(p.counter_value(65_536), 0);
        assert_eq!(p.counter_value(65_539), 3);
        let p3 = RouterParams {
            counter_bits: 3,
            ..p.clone()
        };
        assert_eq!(p3.counter_value(7), 7);
        assert_eq!(p3.counter_value(9), 1);
        let p32 = RouterParams {
            counter_bits: 32,
            ..p
        };
        assert_eq!(p32.counter_value((1 << 32) + 5), 5);
        assert_eq!(p32.counter_value(0xffff_ffff), 0xffff_ffff);
    }

    /// `name()` is the serde (config and point-text) spelling of each rule.
    #[test]
    fn rule_names_are_their_point_text() {
        for (d, t, v) in [
            (Dateline::Wrap, TieBreak::Plus, VcSelect::Free),
            (Dateline::Entry, TieBreak::Parity, VcSelect::Flow),
        ] {
            let pt = RouterPoint {
                router: RouterParams {
                    dateline: d,
                    tie_break: t,
                    vc_select: v,
                    ..Default::default()
                },
                node: 0,
            };
            let text = crate::point::to_text(&pt);
            for kv in [
                format!("dateline={}", d.name()),
                format!("tie_break={}", t.name()),
                format!("vc_select={}", v.name()),
            ] {
                assert!(text.contains(&kv), "{text}");
            }
            let back: RouterPoint =
                crate::point::from_text(&text, &RouterPoint::default()).unwrap();
            assert_eq!(back, pt);
        }
    }

    #[test]
    fn rejects_naming_key_value_rule() {
        let bad = [
            (
                RouterParams {
                    classes: 3,
                    ..Default::default()
                },
                "router.classes = 3",
            ),
            (
                RouterParams {
                    flit_bits: 96,
                    ..Default::default()
                },
                "packet.flit_bits = 96",
            ),
            (
                RouterParams {
                    buffer_flits: 8,
                    ..Default::default()
                },
                "router.buffer_flits = 8",
            ),
            (
                RouterParams {
                    dim_order: [0, 0, 1],
                    ..Default::default()
                },
                "router.dim_order",
            ),
            (
                RouterParams {
                    vcs_per_class: 0,
                    ..Default::default()
                },
                "router.vcs_per_class = 0",
            ),
            (
                RouterParams {
                    counter_bits: 0,
                    ..Default::default()
                },
                "router.counter_bits = 0: must be 1..=32",
            ),
            (
                RouterParams {
                    counter_bits: 33,
                    ..Default::default()
                },
                "router.counter_bits = 33: must be 1..=32",
            ),
        ];
        for (p, key) in bad {
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
