//! Protection: receive windows and the PDID checks of the receive path.
//!
//! A window is `[base, base + size)` with a PDID and an enable bit, set only
//! through privileged registers. An access `[addr, addr + len)` by PDID `p`
//! is allowed when it lies below `2^addr_bits` and some enabled window holds
//! the whole range and has PDID `p`. Otherwise it is refused with
//! [`RejectReason::Pdid`] when some enabled window holds the whole range (only
//! the PDID is wrong), else [`RejectReason::Window`]. Windows grant both
//! directions: writes landing here and RDMA reads served from here.

use super::errors::RejectReason;

/// One receive window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// First byte (42 bits).
    pub base: u64,
    /// Size in bytes (43 bits: a window may cover the whole 2^42 space).
    pub size: u64,
    /// Protection domain allowed in.
    pub pdid: u16,
    /// Window in use.
    pub enabled: bool,
}

impl Window {
    /// `[addr, addr + len)` lies inside the window (ignores `enabled`/`pdid`).
    pub fn holds(&self, addr: u64, len: u64) -> bool {
        addr >= self.base && addr as u128 + len as u128 <= self.base as u128 + self.size as u128
    }
}

/// Check an access of `len >= 1` bytes at `addr` by `pdid`.
pub fn check_access(
    windows: &[Window],
    addr: u64,
    len: u64,
    pdid: u16,
    addr_bits: u32,
) -> Result<(), RejectReason> {
    if addr as u128 + len as u128 > 1u128 << addr_bits {
        return Err(RejectReason::Window);
    }
    let mut some_window = false;
    for w in windows.iter().filter(|w| w.enabled && w.holds(addr, len)) {
        if w.pdid == pdid {
            return Ok(());
        }
        some_window = true;
    }
    Err(if some_window {
        RejectReason::Pdid
    } else {
        RejectReason::Window
    })
}

/// The mailbox accepts a message of `pdid` when it is open to every PDID or
/// its PDID register matches.
pub fn check_mailbox(open: bool, mailbox_pdid: u16, pdid: u16) -> Result<(), RejectReason> {
    if open || mailbox_pdid == pdid {
        Ok(())
    } else {
        Err(RejectReason::Pdid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn edges_and_reasons() {
        let w = [
            Window {
                base: 0x1000,
                size: 0x100,
                pdid: 7,
                enabled: true,
            },
            Window {
                base: 0x1080,
                size: 0x1000,
                pdid: 9,
                enabled: true,
            },
            Window {
                base: 0,
                size: 1 << 42,
                pdid: 3,
                enabled: false,
            },
        ];
        assert_eq!(check_access(&w, 0x1000, 0x100, 7, 40), Ok(()));
        assert_eq!(
            check_access(&w, 0x0FFF, 1, 7, 40),
            Err(RejectReason::Window)
        );
        assert_eq!(
            check_access(&w, 0x10FF, 2, 7, 40),
            Err(RejectReason::Pdid),
            "the second window holds it, with another PDID"
        );
        assert_eq!(check_access(&w, 0x10FF, 2, 9, 40), Ok(()));
        assert_eq!(
            check_access(&w, 0x1000, 0x1000, 9, 40),
            Err(RejectReason::Window),
            "spans two windows, neither holds it whole"
        );
        assert_eq!(check_access(&w, 0x1000, 1, 3, 40), Err(RejectReason::Pdid));
        let all = [Window {
            base: 0,
            size: 1 << 42,
            pdid: 0,
            enabled: true,
        }];
        assert_eq!(check_access(&all, (1 << 40) - 4, 4, 0, 40), Ok(()));
        assert_eq!(
            check_access(&all, (1 << 40) - 4, 5, 0, 40),
            Err(RejectReason::Window),
            "beyond addr_bits"
        );
        assert_eq!(check_mailbox(false, 5, 5), Ok(()));
        assert_eq!(check_mailbox(false, 5, 6), Err(RejectReason::Pdid));
        assert_eq!(check_mailbox(true, 5, 6), Ok(()));
    }

    /// Against a byte-by-byte reference: allowed iff one window covers every byte.
    #[test]
    fn matches_bytewise_reference() {
        let mut rng = Rng::new(11);
        for _ in 0..2000 {
            let ws: Vec<Window> = (0..3)
                .map(|_| Window {
                    base: rng.below(64),
                    size: rng.below(64),
                    pdid: rng.below(2) as u16,
                    enabled: rng.chance(0.8),
                })
                .collect();
            let addr = rng.below(128);
            let len = 1 + rng.below(32);
            let pdid = rng.below(2) as u16;
            let covers =
                |w: &Window| (addr..addr + len).all(|b| b >= w.base && b < w.base + w.size);
            let want = if ws.iter().any(|w| w.enabled && w.pdid == pdid && covers(w)) {
                Ok(())
            } else if ws.iter().any(|w| w.enabled && covers(w)) {
                Err(RejectReason::Pdid)
            } else {
                Err(RejectReason::Window)
            };
            assert_eq!(check_access(&ws, addr, len, pdid, 40), want);
        }
    }
}
