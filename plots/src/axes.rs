//! The frame of a line chart (the loss curves, the power trace): its axis titles and
//! the room they, the ticks and a legend leave for the plot.

use plotters::style::text_anchor::{HPos, VPos};

use crate::canvas::{Font, Para, Rect};
use crate::error::PlotError;
use crate::style::TypeScale;

/// An axis title at the label size, shrunk (then wrapped) to `room`.
pub(crate) fn axis_title(
    s: &str,
    ts: TypeScale,
    room: i32,
    vertical: bool,
) -> Result<Para, PlotError> {
    let f = Font::new(ts.label).anchor(HPos::Center, VPos::Top);
    let f = if vertical { f.vertical() } else { f };
    Para::shrunk(s, f, room.max(40), ts.small)
}

/// What the plot frame leaves room for.
pub(crate) struct Axes {
    pub ts: TypeScale,
    pub w: i32,
    /// The height above any notes under the plot.
    pub h: i32,
    pub margin: i32,
    pub top: i32,
    pub tick_w: i32,
}

impl Axes {
    /// The plot frame for a legend `beside` px wide on the right (0: none) and the axis
    /// titles (one line each where empty).
    pub fn frame(&self, beside: i32, x_title: &Para, y_title: &Para) -> Rect {
        let line = |p: &Para| p.height().max(self.ts.label.round() as i32);
        let tick_h = self.ts.tick.round() as i32;
        let right = if beside > 0 {
            3 * self.margin + beside
        } else {
            self.margin
        };
        Rect {
            x0: self.margin + line(y_title) + 12 + self.tick_w + 10,
            y0: self.top,
            x1: self.w - right,
            y1: self.h - self.margin - line(x_title) - tick_h - 24,
        }
    }
}
