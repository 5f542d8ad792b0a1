"""A compact PPO (proximal policy optimization) for talus.VecEnv, in PyTorch on the CPU.

Schulman, Wolski, Dhariwal, Radford, Klimov, "Proximal policy optimization algorithms", 2017,
with the details that matter for continuous control (Huang et al., "The 37 implementation
details of proximal policy optimization", ICLR blog track 2022; legged_gym's rsl_rl):
Gaussian policy with a state-independent log standard deviation, generalized advantage
estimation (Schulman et al. 2016), advantage normalization per minibatch, clipped surrogate and
clipped value loss, gradient-norm clipping, running observation normalization, and bootstrapping
of time-limit truncations from the value of the final observation (an ended-by-time-limit
episode is not a failure; talus.VecEnv hands the final observation in
infos["final_obs"], Gymnasium 1.x's name, present on a step where some episode ended).

Used by train_cartpole.py and train_anymal.py; `python3 ppo.py` does nothing.
"""
import time

import numpy as np
import torch
from torch import nn


class RunningNorm:
    """Running mean and variance of observations (Chan et al.'s parallel update), for normalization."""

    def __init__(self, dim, clip=10.0):
        self.mean = np.zeros(dim)
        self.var = np.ones(dim)
        self.count = 1e-4
        self.clip = clip

    def update(self, x):
        x = np.asarray(x, dtype=np.float64)
        m, v, n = x.mean(0), x.var(0), x.shape[0]
        delta = m - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + v * n + delta ** 2 * self.count * n / total) / total
        self.count = total

    def __call__(self, x):
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -self.clip, self.clip).astype(np.float32)

    def state_dict(self):
        return {"mean": self.mean.tolist(), "var": self.var.tolist(), "count": self.count}

    def load_state_dict(self, d):
        self.mean, self.var, self.count = np.array(d["mean"]), np.array(d["var"]), d["count"]


def mlp(sizes, act, out_gain):
    layers = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        nn.init.orthogonal_(lin.weight, out_gain if last else np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if not last:
            layers.append(act())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=(64, 64), act=nn.Tanh, init_std=1.0):
        super().__init__()
        self.actor = mlp([obs_dim, *hidden, act_dim], act, 0.01)
        self.critic = mlp([obs_dim, *hidden, 1], act, 1.0)
        self.log_std = nn.Parameter(torch.full((act_dim,), float(np.log(init_std))))

    def dist(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp())

    def value(self, obs):
        return self.critic(obs).squeeze(-1)


class PPO:
    """PPO on a talus.VecEnv. Call `iteration()` repeatedly; each collects num_steps x num_envs
    transitions and updates the policy; returns a dict of statistics."""

    def __init__(self, env, num_steps=64, epochs=10, minibatches=4, lr=3e-4, gamma=0.99, lam=0.95,
                 clip=0.2, vf_coef=0.5, ent_coef=0.0, max_grad=1.0, hidden=(64, 64), act=nn.Tanh, init_std=1.0,
                 seed=0, normalize_obs=True, desired_kl=None):
        torch.manual_seed(seed)
        self.env = env
        self.n = env.num_envs
        self.obs_dim = env.single_observation_space.shape[0]
        self.act_dim = env.single_action_space.shape[0]
        self.low = torch.as_tensor(env.single_action_space.low)
        self.high = torch.as_tensor(env.single_action_space.high)
        self.hidden = tuple(hidden)
        self.ac = ActorCritic(self.obs_dim, self.act_dim, hidden, act, init_std)
        self.opt = torch.optim.Adam(self.ac.parameters(), lr=lr, eps=1e-5)
        self.lr = lr
        self.num_steps, self.epochs, self.minibatches = num_steps, epochs, minibatches
        self.gamma, self.lam, self.clip = gamma, lam, clip
        self.vf_coef, self.ent_coef, self.max_grad = vf_coef, ent_coef, max_grad
        self.desired_kl = desired_kl
        self.norm = RunningNorm(self.obs_dim) if normalize_obs else None
        raw, _ = env.reset(seed=seed)
        self.raw_obs = raw
        self.env_steps = 0
        self.episodes = []  # (env steps at the end, return, length)

    def _obs(self, raw, update=False):
        if self.norm is None:
            return torch.as_tensor(raw)
        if update:
            self.norm.update(raw)
        return torch.as_tensor(self.norm(raw))

    def act(self, obs_t, deterministic=False):
        with torch.no_grad():
            d = self.ac.dist(obs_t)
            a = d.mean if deterministic else d.sample()
        return a

    def iteration(self):
        T, N = self.num_steps, self.n
        obs_buf = torch.zeros(T, N, self.obs_dim)
        act_buf = torch.zeros(T, N, self.act_dim)
        logp_buf = torch.zeros(T, N)
        rew_buf = torch.zeros(T, N)
        done_buf = torch.zeros(T, N)
        val_buf = torch.zeros(T, N)
        t_env = 0.0
        env_reward = 0.0
        for t in range(T):
            obs_t = self._obs(self.raw_obs, update=True)
            with torch.no_grad():
                d = self.ac.dist(obs_t)
                a = d.sample()
                logp = d.log_prob(a).sum(-1)
                v = self.ac.value(obs_t)
            t0 = time.perf_counter()
            raw, rew, term, trunc, infos = self.env.step(a.numpy())
            t_env += time.perf_counter() - t0
            env_reward += float(rew.mean()) / T
            rew_t = torch.as_tensor(rew, dtype=torch.float32)
            if trunc.any():  # time limit: bootstrap from the value of the final observation
                idx = np.flatnonzero(trunc & ~term)
                if len(idx):
                    final = self._obs(infos["final_obs"][idx])
                    with torch.no_grad():
                        rew_t[idx] += self.gamma * self.ac.value(final)
            ended = np.flatnonzero(infos["_final_obs"]) if "_final_obs" in infos else ()
            self.env_steps += N
            for i in ended:
                self.episodes.append((self.env_steps, float(infos["episode_return"][i]),
                                      int(infos["episode_length"][i])))
            obs_buf[t], act_buf[t], logp_buf[t], val_buf[t] = obs_t, a, logp, v
            rew_buf[t] = rew_t
            done_buf[t] = torch.as_tensor(term | trunc, dtype=torch.float32)
            self.raw_obs = raw
        with torch.no_grad():
            last_v = self.ac.value(self._obs(self.raw_obs))
        adv = torch.zeros(T, N)
        gae = torch.zeros(N)
        for t in reversed(range(T)):
            next_v = last_v if t == T - 1 else val_buf[t + 1]
            nonterminal = 1.0 - done_buf[t]
            delta = rew_buf[t] + self.gamma * next_v * nonterminal - val_buf[t]
            gae = delta + self.gamma * self.lam * nonterminal * gae
            adv[t] = gae
        ret = adv + val_buf
        stats = self._update(obs_buf.reshape(T * N, -1), act_buf.reshape(T * N, -1), logp_buf.reshape(-1),
                             adv.reshape(-1), ret.reshape(-1), val_buf.reshape(-1))
        stats.update(env_time=t_env, mean_reward=env_reward)  # the environment's reward, no bootstrap
        return stats

    def _update(self, obs, act, logp_old, adv, ret, val_old):
        B = obs.shape[0]
        mb = B // self.minibatches
        pol_losses, val_losses, kls = [], [], []
        for _ in range(self.epochs):
            perm = torch.randperm(B)
            for k in range(self.minibatches):
                idx = perm[k * mb:(k + 1) * mb]
                d = self.ac.dist(obs[idx])
                logp = d.log_prob(act[idx]).sum(-1)
                ratio = (logp - logp_old[idx]).exp()
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pol_loss = -torch.min(ratio * a, ratio.clamp(1 - self.clip, 1 + self.clip) * a).mean()
                v = self.ac.value(obs[idx])
                v_clip = val_old[idx] + (v - val_old[idx]).clamp(-self.clip, self.clip)
                val_loss = 0.5 * torch.max((v - ret[idx]) ** 2, (v_clip - ret[idx]) ** 2).mean()
                ent = d.entropy().sum(-1).mean()
                loss = pol_loss + self.vf_coef * val_loss - self.ent_coef * ent
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.ac.parameters(), self.max_grad)
                self.opt.step()
                with torch.no_grad():
                    kl = float(((ratio - 1) - (logp - logp_old[idx])).mean())
                if self.desired_kl:  # rsl_rl's adaptive learning rate
                    if kl > 2 * self.desired_kl:
                        self.lr = max(1e-5, self.lr / 1.5)
                    elif kl < self.desired_kl / 2:
                        self.lr = min(1e-2, self.lr * 1.5)
                    for g in self.opt.param_groups:
                        g["lr"] = self.lr
                pol_losses.append(float(pol_loss))
                val_losses.append(float(val_loss))
                kls.append(kl)
        return {"policy_loss": float(np.mean(pol_losses)), "value_loss": float(np.mean(val_losses)),
                "approx_kl": float(np.mean(kls)), "std": float(self.ac.log_std.exp().mean()), "lr": self.lr}

    def set_lr(self, lr):
        """Set the learning rate (e.g. a linear decay over a budget, as CleanRL's anneal_lr)."""
        self.lr = lr
        for g in self.opt.param_groups:
            g["lr"] = lr

    def recent_return(self, k=20):
        """Mean return of the last k finished episodes (NaN before any)."""
        if not self.episodes:
            return float("nan")
        return float(np.mean([r for _, r, _ in self.episodes[-k:]]))

    def save(self, path, extra=None):
        torch.save({"model": self.ac.state_dict(), "obs_norm": self.norm.state_dict() if self.norm else None,
                    "obs_dim": self.obs_dim, "act_dim": self.act_dim, **(extra or {})}, path)


def plot_curve(path, xs, ys, xlabel, ylabel, title, target=None):
    """Save a learning curve as PNG (matplotlib, no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, ys, lw=1.5)
    if target is not None:
        ax.axhline(target, color="gray", ls="--", lw=1, label=f"maximum {target:g}")
        ax.legend(loc="lower right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
