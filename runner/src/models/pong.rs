//! atari's environment: a small deterministic Pong-like game drawn straight at 84×84
//! gray (no emulator or ROM can ship), with Pong's six actions, ±1 a point and an episode
//! to 21, wrapped as the script's Atari wrappers do (4 ticks per step with the last two
//! frames max-pooled, 1–30 no-op ticks at reset, the reward's sign, auto-reset, frame stack
//! zeroed at an episode's end); [`VecGame`] steps `num_processes` of them. The agent is
//! `atari.rs`.
use mlbench_schema::rng::SplitMix64;
use tch::{Device, Kind, Tensor};

/// WarpFrame's 84×84 grayscale; the conv trunk's `32·7·7` depends on it.
pub(super) const FRAME: usize = 84;
pub(super) const FRAME_LEN: usize = FRAME * FRAME;
/// VecPyTorchFrameStack's 4 frames.
pub(super) const STACK: usize = 4;
pub(super) const STACK_LEN: usize = STACK * FRAME_LEN;

/// Points that end an episode, as Pong's 21.
pub(super) const POINTS: u32 = 21;
/// Emulator ticks per agent step (MaxAndSkipEnv's skip 4); the last two are max-pooled.
const SKIP: usize = 4;
/// NoopResetEnv's noop_max: 1…30 no-op ticks after a reset.
const NOOP_MAX: u64 = 30;
/// The playfield's rows: walls above TOP and from BOTTOM on.
const TOP: f32 = 4.0;
const BOTTOM: f32 = 80.0;
const PADDLE_H: f32 = 8.0;
const PADDLE_W: f32 = 2.0;
const BALL: f32 = 2.0;
/// Columns of the paddles' left edges: the agent on the right, as in Pong.
const AGENT_X: f32 = 74.0;
const OPPONENT_X: f32 = 8.0;
/// Pixels per tick. The opponent is slower than the steepest ball, so it can miss; the
/// agent can reach any ball.
const AGENT_SPEED: f32 = 2.0;
const OPPONENT_SPEED: f32 = 1.0;
const BALL_VX: f32 = 1.0;
const MAX_VY: f32 = 1.5;
/// Gray levels (roughly Pong's after the grayscale conversion).
const BACKGROUND: u8 = 87;
const WALL: u8 = 236;
const AGENT: u8 = 147;
const OPPONENT: u8 = 123;
const BALL_GRAY: u8 = 236;

/// The game's generator (serves, no-ops): SplitMix64.
type Rng = SplitMix64;

/// Where things are, for drawing.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Snapshot {
    ball: (f32, f32),
    agent_y: f32,
    opponent_y: f32,
}

/// A Pong-like game drawn directly at 84×84 in gray: walls above and below, the agent's
/// paddle on the right (up with actions 2 and 4, down with 3 and 5; 0 and 1 do nothing),
/// an opponent paddle on the left that follows the ball when it comes its way, a 2×2 ball
/// bouncing off walls and paddles (its vertical speed set by where it hits a paddle). A ball
/// past the agent is −1, past the opponent +1; the episode ends when a side has `points`.
#[derive(Debug, Clone, PartialEq)]
struct Pong {
    ball: (f32, f32),
    velocity: (f32, f32),
    agent_y: f32,
    opponent_y: f32,
    /// (agent, opponent).
    score: (u32, u32),
    points: u32,
    rng: Rng,
    /// The last observation (84×84).
    frame: Vec<u8>,
}

impl Pong {
    fn new(seed: u64, points: u32) -> Pong {
        let mut game = Pong {
            ball: (0.0, 0.0),
            velocity: (0.0, 0.0),
            agent_y: 0.0,
            opponent_y: 0.0,
            score: (0, 0),
            points,
            rng: Rng::new(seed),
            frame: vec![0; FRAME_LEN],
        };
        game.reset();
        game
    }

    fn reset(&mut self) {
        let middle = (TOP + BOTTOM - PADDLE_H) / 2.0;
        self.agent_y = middle;
        self.opponent_y = middle;
        self.score = (0, 0);
        self.serve();
        // NoopResetEnv: 1…30 no-op ticks. From the centre at 1 px/tick the ball cannot
        // reach a paddle in 30 ticks, so no point is scored here.
        let noops = 1 + self.rng.next_u64() % NOOP_MAX;
        for _ in 0..noops {
            self.tick(0);
        }
        let snapshot = self.snapshot();
        self.draw(&[snapshot]);
    }

    /// The ball from the centre, towards a random side, at a random height and slope.
    fn serve(&mut self) {
        let y = TOP + 16.0 + self.rng.unit_f32() * (BOTTOM - TOP - 32.0 - BALL);
        self.ball = ((FRAME as f32 - BALL) / 2.0, y.floor());
        let vx = if self.rng.next_u64() & 1 == 0 {
            BALL_VX
        } else {
            -BALL_VX
        };
        self.velocity = (vx, (self.rng.unit_f32() * 2.0 - 1.0) * MAX_VY * 0.5);
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            ball: self.ball,
            agent_y: self.agent_y,
            opponent_y: self.opponent_y,
        }
    }

    fn done(&self) -> bool {
        self.score.0 >= self.points || self.score.1 >= self.points
    }

    /// One emulator tick; returns the point scored (+1, −1 or 0).
    fn tick(&mut self, action: i64) -> i32 {
        let dy = match action {
            2 | 4 => -AGENT_SPEED,
            3 | 5 => AGENT_SPEED,
            _ => 0.0,
        };
        self.agent_y = (self.agent_y + dy).clamp(TOP, BOTTOM - PADDLE_H);
        let (vx, _) = self.velocity;
        if vx < 0.0 {
            let target = self.ball.1 + BALL / 2.0 - PADDLE_H / 2.0;
            let step = (target - self.opponent_y).clamp(-OPPONENT_SPEED, OPPONENT_SPEED);
            self.opponent_y = (self.opponent_y + step).clamp(TOP, BOTTOM - PADDLE_H);
        }
        let (mut x, mut y) = (self.ball.0 + self.velocity.0, self.ball.1 + self.velocity.1);
        if y < TOP {
            y = 2.0 * TOP - y;
            self.velocity.1 = -self.velocity.1;
        } else if y + BALL > BOTTOM {
            y = 2.0 * (BOTTOM - BALL) - y;
            self.velocity.1 = -self.velocity.1;
        }
        let overlaps = |paddle_y: f32| y + BALL > paddle_y && y < paddle_y + PADDLE_H;
        // The slope depends on where the ball meets the paddle, as in Pong.
        let slope = |paddle_y: f32| {
            let offset = (y + BALL / 2.0) - (paddle_y + PADDLE_H / 2.0);
            (MAX_VY * offset / (PADDLE_H / 2.0 + BALL / 2.0)).clamp(-MAX_VY, MAX_VY)
        };
        if self.velocity.0 > 0.0
            && x + BALL >= AGENT_X
            && x < AGENT_X + PADDLE_W
            && overlaps(self.agent_y)
        {
            x = AGENT_X - BALL;
            self.velocity = (-self.velocity.0, slope(self.agent_y));
        } else if self.velocity.0 < 0.0
            && x <= OPPONENT_X + PADDLE_W
            && x + BALL > OPPONENT_X
            && overlaps(self.opponent_y)
        {
            x = OPPONENT_X + PADDLE_W;
            self.velocity = (-self.velocity.0, slope(self.opponent_y));
        }
        self.ball = (x, y);
        let point = if x >= FRAME as f32 {
            self.score.1 += 1;
            -1
        } else if x + BALL <= 0.0 {
            self.score.0 += 1;
            1
        } else {
            0
        };
        if point != 0 && !self.done() {
            self.serve();
        }
        point
    }

    /// One agent step (MaxAndSkipEnv + ClipRewardEnv): `SKIP` ticks with the same action,
    /// stopping at the episode's end; the frame is the max of the last two ticks' pictures;
    /// the reward is the sign of the ticks' sum. Returns (reward, done).
    fn step(&mut self, action: i64) -> (f32, bool) {
        let mut total = 0;
        let mut last = [self.snapshot(); 2];
        for _ in 0..SKIP {
            total += self.tick(action);
            last = [last[1], self.snapshot()];
            if self.done() {
                break;
            }
        }
        self.draw(&last);
        (total.signum() as f32, self.done())
    }

    /// Draws the snapshots over one background, the brighter pixel winning: the max of
    /// their pictures, since every object is brighter than the background.
    fn draw(&mut self, snapshots: &[Snapshot]) {
        let frame = &mut self.frame;
        frame.fill(BACKGROUND);
        let mut rect = |x: f32, y: f32, w: f32, h: f32, gray: u8| {
            let clip = |v: f32| (v.floor().max(0.0) as usize).min(FRAME);
            for row in clip(y)..clip(y + h) {
                for px in &mut frame[row * FRAME + clip(x)..row * FRAME + clip(x + w)] {
                    *px = (*px).max(gray);
                }
            }
        };
        rect(0.0, 0.0, FRAME as f32, TOP, WALL);
        rect(0.0, BOTTOM, FRAME as f32, FRAME as f32 - BOTTOM, WALL);
        for s in snapshots {
            rect(AGENT_X, s.agent_y, PADDLE_W, PADDLE_H, AGENT);
            rect(OPPONENT_X, s.opponent_y, PADDLE_W, PADDLE_H, OPPONENT);
            rect(s.ball.0, s.ball.1, BALL, BALL, BALL_GRAY);
        }
    }
}

/// `num_processes` games as make_vec_envs gives them: game `rank` seeded with
/// `seed + rank`, reset when its episode ends, and VecPyTorchFrameStack's stack of 4 frames
/// (shifted one frame per step; an environment's stack zeroed when its episode ended,
/// before the new episode's first frame goes in last).
pub(super) struct VecGame {
    games: Vec<Pong>,
    /// [N, 4, 84, 84] uint8.
    stack: Vec<u8>,
}

impl VecGame {
    pub(super) fn new(n: usize, seed: i64, points: u32) -> VecGame {
        let games: Vec<Pong> = (0..n)
            .map(|rank| Pong::new((seed as u64).wrapping_add(rank as u64), points))
            .collect();
        let mut stack = vec![0; n * STACK_LEN];
        for (slot, game) in stack.chunks_exact_mut(STACK_LEN).zip(&games) {
            slot[(STACK - 1) * FRAME_LEN..].copy_from_slice(&game.frame);
        }
        VecGame { games, stack }
    }

    /// Steps every game with its action; returns the rewards and the episode ends.
    pub(super) fn step(&mut self, actions: &[i64]) -> (Vec<f32>, Vec<bool>) {
        assert_eq!(
            actions.len(),
            self.games.len(),
            "one action per environment"
        );
        let mut rewards = Vec::with_capacity(actions.len());
        let mut dones = Vec::with_capacity(actions.len());
        for ((game, slot), &action) in self
            .games
            .iter_mut()
            .zip(self.stack.chunks_exact_mut(STACK_LEN))
            .zip(actions)
        {
            let (reward, done) = game.step(action);
            if done {
                // The vectorised env resets at once and returns the new episode's frame.
                game.reset();
            }
            slot.copy_within(FRAME_LEN.., 0);
            if done {
                slot.fill(0);
            }
            slot[(STACK - 1) * FRAME_LEN..].copy_from_slice(&game.frame);
            rewards.push(reward);
            dones.push(done);
        }
        (rewards, dones)
    }

    #[cfg(test)]
    fn obs(&self) -> &[u8] {
        &self.stack
    }

    /// The stack as [N, 4, 84, 84] float32 on `device` (VecPyTorch's `.float().to(device)`).
    pub(super) fn obs_tensor(&self, device: Device) -> Tensor {
        let f = FRAME as i64;
        Tensor::from_slice(&self.stack)
            .view([self.games.len() as i64, STACK as i64, f, f])
            .to_device(device)
            .to_kind(Kind::Float)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(obs: &[u8], env: usize, c: usize) -> &[u8] {
        let start = env * STACK_LEN + c * FRAME_LEN;
        &obs[start..start + FRAME_LEN]
    }

    #[test]
    fn frames_are_84_by_84_stacked_4_and_drawn() {
        let envs = VecGame::new(3, 7, POINTS);
        assert_eq!(envs.obs().len(), 3 * 4 * 84 * 84);
        assert_eq!(envs.obs_tensor(Device::Cpu).size(), [3, 4, 84, 84]);
        for env in 0..3 {
            // After a reset only the newest frame is there.
            for c in 0..3 {
                assert!(channel(envs.obs(), env, c).iter().all(|&p| p == 0));
            }
            let frame = channel(envs.obs(), env, 3);
            assert_eq!(frame[0], WALL, "top wall");
            assert_eq!(frame[83 * 84 + 40], WALL, "bottom wall");
            let count = |gray| frame.iter().filter(|&&p| p == gray).count();
            assert_eq!(count(AGENT), 16, "a 2×8 paddle");
            assert_eq!(count(OPPONENT), 16, "a 2×8 paddle");
            // Walls (84·4 each) plus a whole 2×2 ball inside the field.
            assert_eq!(count(WALL), 2 * 84 * 4 + 4);
        }
    }

    #[test]
    fn each_step_shifts_the_stack_by_one_frame() {
        let mut envs = VecGame::new(2, 11, POINTS);
        for i in 0..6 {
            let before = envs.obs().to_vec();
            let (_, dones) = envs.step(&[2, (i % 6) as i64]);
            assert_eq!(dones, [false, false]);
            for env in 0..2 {
                for c in 0..3 {
                    assert_eq!(channel(envs.obs(), env, c), channel(&before, env, c + 1));
                }
                assert_eq!(
                    channel(envs.obs(), env, 3),
                    envs.games[env].frame.as_slice()
                );
            }
            assert_ne!(
                channel(envs.obs(), 0, 3),
                channel(&before, 0, 3),
                "the ball moves"
            );
        }
        let tensor = Vec::<f32>::try_from(envs.obs_tensor(Device::Cpu).reshape([-1])).unwrap();
        assert!(
            tensor
                .iter()
                .zip(envs.obs())
                .all(|(&f, &b)| f == f32::from(b))
        );
    }

    /// Random actions from a fixed stream for `steps` steps: every observation, reward
    /// and episode end.
    fn play(seed: i64, steps: usize) -> (Vec<u8>, Vec<f32>, Vec<bool>) {
        let mut envs = VecGame::new(4, seed, 3);
        let mut actions = Rng::new(99);
        let (mut frames, mut rewards, mut dones) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..steps {
            let a: Vec<i64> = (0..4).map(|_| (actions.next_u64() % 6) as i64).collect();
            let (r, d) = envs.step(&a);
            frames.extend_from_slice(envs.obs());
            rewards.extend(r);
            dones.extend(d);
        }
        (frames, rewards, dones)
    }

    #[test]
    fn the_game_is_deterministic_for_a_seed_and_scores_both_ways() {
        let a = play(5, 600);
        assert!(a == play(5, 600), "same seed, same actions: same game");
        assert!(a.0 != play(6, 600).0, "another seed serves differently");
        // Random play to 3 points: both sides score and episodes end.
        assert!(
            a.1.contains(&1.0) && a.1.contains(&-1.0),
            "rewards {:?}",
            a.1
        );
        assert!(a.2.contains(&true));
        assert!(a.1.iter().all(|r| [-1.0, 0.0, 1.0].contains(r)));
    }

    #[test]
    fn a_scripted_miss_loses_a_point_and_ends_a_one_point_episode() {
        let mut envs = VecGame::new(1, 3, 1);
        let game = &mut envs.games[0];
        // Ball at x 70, rows 10–11, moving right; the paddle far below (rows 60–67).
        game.ball = (70.0, 10.0);
        game.velocity = (1.0, 0.0);
        game.agent_y = 60.0;
        let before = envs.obs().to_vec();
        // It passes the paddle's face (x 74) at tick 4 and leaves the frame (x ≥ 84) at
        // tick 14, in the 4th step of 4 ticks.
        for _ in 0..3 {
            assert_eq!(envs.step(&[0]), (vec![0.0], vec![false]));
        }
        assert_eq!(envs.step(&[0]), (vec![-1.0], vec![true]));
        // Reset: a fresh score and a stack holding only the new episode's first frame.
        assert_eq!(envs.games[0].score, (0, 0));
        for c in 0..3 {
            assert!(channel(envs.obs(), 0, c).iter().all(|&p| p == 0));
        }
        assert_ne!(channel(envs.obs(), 0, 3), channel(&before, 0, 3));
    }

    #[test]
    fn a_scripted_return_and_an_opponent_miss() {
        let mut game = Pong::new(3, POINTS);
        // The paddle covers the ball's rows: it comes back, sloped by the hit's offset
        // (ball centre 11, paddle centre 10: 1.5·1/5 = 0.3).
        game.ball = (70.0, 10.0);
        game.velocity = (1.0, 0.0);
        game.agent_y = 6.0;
        assert_eq!(game.step(0), (0.0, false));
        assert_eq!(game.velocity.0, -1.0);
        assert!((game.velocity.1 - 0.3).abs() < 1e-6, "{:?}", game.velocity);
        // A ball low on the left with the opponent high up: it cannot get there in time.
        game.ball = (12.0, 70.0);
        game.velocity = (-1.0, 0.0);
        game.opponent_y = 10.0;
        game.score = (0, 0);
        let rewards: Vec<f32> = (0..4).map(|_| game.step(1).0).collect();
        assert_eq!(rewards, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(game.score, (1, 0));
        assert!(!game.done());
    }

    #[test]
    fn actions_move_the_agent_paddle_within_the_walls() {
        let mut game = Pong::new(1, POINTS);
        let start = game.agent_y;
        game.step(2);
        assert_eq!(game.agent_y, start - 8.0, "up 2 px per tick, 4 ticks");
        game.step(5);
        assert_eq!(game.agent_y, start);
        for _ in 0..20 {
            game.step(3);
        }
        assert_eq!(game.agent_y, BOTTOM - PADDLE_H);
    }
}
