//! The frame of a line chart (the loss curves, the power trace): its axis titles and
//! the room they, the ticks and a legend leave for the plot.

use plotters::style::text_anchor::{HPos, VPos};

use crate::Size;
use crate::canvas::{Font, Key, Legend, Para, Rect};
use crate::error::{MAX_SIDE, PlotError};
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

/// A line chart's frame with its legend and axis titles placed.
pub(crate) struct Layout {
    pub legend: Legend,
    /// Below the plot (the image grown by its height), else right of it.
    pub legend_below: bool,
    pub frame: Rect,
    pub x_title: Para,
    pub y_title: Para,
    /// The image's size with the legend.
    pub size: Size,
}

impl Axes {
    /// Puts the legend right of the plot if it fits there, else below it, then the axis
    /// titles; `what` says what a size too small for them lacks room for.
    pub fn lay_out(
        &self,
        entries: impl Fn() -> Vec<(Key, String)>,
        (x_label, y_label): (&str, &str),
        size: Size,
        what: &str,
    ) -> Result<Layout, PlotError> {
        let (ts, w, margin) = (self.ts, self.w, self.margin);
        let column = Legend::column(ts, entries(), w * 3 / 10 - Legend::KEY_W)?;
        let right = self.frame(column.width, &Para::empty(), &Para::empty());
        let legend_below = column.height > right.height();
        let legend = if legend_below {
            Legend::rows(ts, entries(), w - 2 * margin)?
        } else {
            column
        };
        let beside = if legend_below { 0 } else { legend.width };
        let rough = self.frame(beside, &Para::empty(), &Para::empty());
        let x_title = axis_title(x_label, ts, rough.width(), false)?;
        let y_title = axis_title(y_label, ts, rough.height(), true)?;
        let frame = self.frame(beside, &x_title, &y_title);
        if frame.width() < 40 || frame.height() < 40 {
            return Err(PlotError::Invalid {
                what: format!("image size {}×{}", size.width, size.height),
                reason: format!("too small for the {what} of this chart"),
            });
        }
        let extra = if legend_below {
            legend.height + margin
        } else {
            0
        };
        let size = Size::new(size.width, grown(size.height, extra)?);
        Ok(Layout {
            legend,
            legend_below,
            frame,
            x_title,
            y_title,
            size,
        })
    }
}

/// `height` + `extra`, if within [`MAX_SIDE`].
fn grown(height: u32, extra: i32) -> Result<u32, PlotError> {
    let h = height + extra.max(0) as u32;
    if h > MAX_SIDE {
        return Err(PlotError::Invalid {
            what: "legend".into(),
            reason: format!("{h} px tall with it, over the {MAX_SIDE} px limit"),
        });
    }
    Ok(h)
}
