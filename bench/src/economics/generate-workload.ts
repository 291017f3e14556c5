import { writeFileSync } from 'node:fs';
import { WORKLOAD_FILE, type WorkloadLine, type WorkloadTask } from './workload';

/**
 * Writes bench/fixtures/economics-workload.jsonl (committed; rerun only to change the mix):
 * `node bench/dist/economics/generate-workload.js`. Deterministic (seeded PRNG), so the
 * same code always writes the same file.
 *
 * Mix: 1,000 requests — 700 distinct, 300 exact repeats of earlier questions (business_type
 * `qa`, temperature 0, so a response cache may answer them; a third of them in bursts of
 * identical concurrent requests, for coalescing); 20 % sensitive; about half Chinese; ~15 %
 * without task_type/complexity (left to the router's defaults or an inferred-meta classifier).
 */

const TOTAL = 1000;
const REPEATS = 300;
const SENSITIVE_SHARE = 0.2;
const NO_META_SHARE = 0.15;

/** Share of each task in the distinct requests, roughly what a support/ops deployment sees. */
const TASK_MIX: [WorkloadTask, number][] = [
  ['classify', 0.2],
  ['extract', 0.2],
  ['summarize', 0.18],
  ['code', 0.12],
  ['reasoning', 0.12],
  ['chat', 0.18],
];

const MAX_TOKENS: Record<WorkloadTask, number> = { classify: 16, extract: 128, summarize: 256, code: 512, reasoning: 512, chat: 256 };

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(20261130);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const SUBJECTS_EN = ['the March invoice run', 'order #48213', 'the billing API outage', 'our onboarding emails', 'the refund policy', 'warehouse 7 inventory', 'the Q3 sales review', 'the mobile login bug', 'the vendor contract renewal', 'the data retention rules', 'ticket SUP-2291', 'the new pricing page'];
const SUBJECTS_ZH = ['三月份的发票批处理', '订单 48213', '计费接口故障', '新用户引导邮件', '退款政策', '七号仓库存', '第三季度销售复盘', '手机端登录问题', '供应商合同续签', '数据保留规定', '工单 SUP-2291', '新版定价页面'];
const PEOPLE_EN = ['Alice Chen', 'Bob Martins', 'Carla Diaz', 'Deepak Rao'];
const PEOPLE_ZH = ['张伟', '李娜', '王芳', '刘洋'];

type Prompt = (subject: string, person: string) => string;
const PROMPTS: Record<WorkloadTask, { en: Prompt[]; zh: Prompt[] }> = {
  classify: {
    en: [
      (s) => `Classify this customer message as billing, technical, account or other. Answer with one word.\n\n"Hi, I was charged twice for ${s} and need one charge reversed."`,
      (s, p) => `Is the sentiment of this review positive, neutral or negative?\n\n"${p} says: the team handled ${s} quickly, but nobody told us in advance."`,
      (s) => `Label the urgency (low/medium/high) of: "Production is down since ${s} was deployed, customers cannot pay."`,
    ],
    zh: [
      (s) => `请把这条客户留言分类为：账单、技术、账户、其他。只回答一个词。\n\n“你好，${s}重复扣款了，请帮我退回一笔。”`,
      (s, p) => `判断这条评价的情感是正面、中性还是负面：\n\n“${p}说：${s}处理得很快，但事先没人通知我们。”`,
      (s) => `判断紧急程度（低/中/高）：“${s}上线后生产环境挂了，客户无法付款。”`,
    ],
  },
  extract: {
    en: [
      (s, p) => `Extract the fields {name, date, amount, reference} as JSON from:\n\n"On 12 May ${p} paid 1,240.50 EUR for ${s}, reference INV-2026-0412."`,
      (s) => `List every date and deadline mentioned, as JSON array:\n\n"The review of ${s} starts 3 June, drafts are due 10 June and sign-off is 17 June."`,
      (s, p) => `Pull out the action items and owners from these notes: "${p} will check ${s} by Friday; finance confirms the budget next week; legal reviews clause 4."`,
    ],
    zh: [
      (s, p) => `从下文中提取字段 {姓名, 日期, 金额, 编号}，输出 JSON：\n\n“5月12日，${p}为${s}支付了 1240.50 元，编号 INV-2026-0412。”`,
      (s) => `列出文中提到的所有日期和截止时间，输出 JSON 数组：“${s}的评审6月3日开始，初稿6月10日提交，6月17日签字。”`,
      (s, p) => `从会议纪要中提取待办事项和负责人：“${p}周五前核对${s}；财务下周确认预算；法务审阅第4条。”`,
    ],
  },
  summarize: {
    en: [
      (s, p) => `Summarize in three bullet points for an executive:\n\n${p} reported that ${s} slipped by two weeks because the supplier changed the data format. The team wrote a converter, tested it on last month's files and found 14 mismatches, 12 of which are fixed. The remaining two need a decision on rounding. Costs are 8 % over plan.`,
      (s) => `Write a two-sentence summary of this incident timeline: 09:02 alerts fire for ${s}; 09:10 on-call acknowledges; 09:25 root cause found (expired certificate); 09:31 certificate rotated; 09:40 traffic normal.`,
      (s, p) => `Summarize this email thread for someone who missed it: ${p} asked whether ${s} can move to next quarter; product said yes if support agrees; support asked for a written FAQ first.`,
    ],
    zh: [
      (s, p) => `请为管理层用三条要点总结：\n\n${p}汇报${s}延期两周，原因是供应商更改了数据格式。团队写了转换程序，用上个月的文件测试发现14处不一致，已修复12处，剩下两处需要决定舍入规则。成本超出计划8%。`,
      (s) => `用两句话总结这次故障时间线：09:02 ${s}告警；09:10 值班确认；09:25 找到根因（证书过期）；09:31 更换证书；09:40 流量恢复。`,
      (s, p) => `为没看邮件的同事总结这段讨论：${p}问${s}能否推迟到下季度；产品说支持部门同意就行；支持部门要求先写一份常见问题文档。`,
    ],
  },
  code: {
    en: [
      (s) => `Write a TypeScript function that parses a CSV line with quoted fields and returns string[]. It is used for ${s}; include edge cases for escaped quotes.`,
      (s) => `This SQL is slow on 5M rows: SELECT * FROM orders WHERE lower(email) = $1 ORDER BY created_at DESC LIMIT 20; — it backs ${s}. Suggest an index and rewrite.`,
      (s) => `Review this Python for bugs:\n\ndef total(items):\n    s = 0\n    for i in range(1, len(items)):\n        s += items[i]['price'] * items[i]['qty']\n    return s\n\n(it computes totals for ${s})`,
    ],
    zh: [
      (s) => `写一个 TypeScript 函数，解析带引号字段的 CSV 行并返回 string[]，用于${s}；需要处理转义引号。`,
      (s) => `这条 SQL 在五百万行上很慢：SELECT * FROM orders WHERE lower(email) = $1 ORDER BY created_at DESC LIMIT 20;（支撑${s}）。请建议索引并改写。`,
      (s) => `检查这段 Python 的 bug：\n\ndef total(items):\n    s = 0\n    for i in range(1, len(items)):\n        s += items[i]['price'] * items[i]['qty']\n    return s\n\n（用于计算${s}的合计）`,
    ],
  },
  reasoning: {
    en: [
      (s) => `We can either refund all customers affected by ${s} (cost 42k, churn -2 %) or offer credits (cost 18k, churn -0.5 %). Lifetime value is 1.9k per customer and 3,100 are affected. Which option is better over 12 months? Show your reasoning.`,
      (s, p) => `${p} claims ${s} caused the drop in conversion, but the drop started two days before the release and also appears on desktop. Evaluate the claim step by step and propose how to test it.`,
      (s) => `Plan the migration of ${s} to a new database with zero downtime. List the risks, their order, and how you would roll back at each step.`,
    ],
    zh: [
      (s) => `针对${s}受影响的客户，方案一：全部退款（成本4.2万，流失率降2%）；方案二：发放代金券（成本1.8万，流失率降0.5%）。客户终身价值1900元，受影响3100人。12个月内哪个更好？请给出推理过程。`,
      (s, p) => `${p}认为${s}导致了转化率下降，但下降在发布前两天就开始了，桌面端也有。请逐步评估这个说法，并设计验证方法。`,
      (s) => `规划把${s}零停机迁移到新数据库的方案，列出风险、顺序以及每一步如何回滚。`,
    ],
  },
  chat: {
    en: [
      (s) => `What is the status of ${s}?`,
      (s) => `Can you explain ${s} to a new colleague in plain words?`,
      (s, p) => `${p} asked me about ${s}. What should I tell them?`,
    ],
    zh: [
      (s) => `${s}现在是什么状态？`,
      (s) => `能用通俗的话给新同事解释一下${s}吗？`,
      (s, p) => `${p}问我${s}的事，我该怎么回复？`,
    ],
  },
};

/** Sensitive prompts carry personal or contractual data; they say so in metadata.sensitivity. */
function sensitiveDetail(lang: 'en' | 'zh', person: string): string {
  return lang === 'en'
    ? `\n\nCustomer record: ${person}, IBAN DE44 5001 0517 5407 3249 31, phone +49 151 2345 6789, diagnosis on file.`
    : `\n\n客户资料：${person}，身份证 110105199003071234，手机 138 0013 8000，病历已存档。`;
}

function pickTask(): WorkloadTask {
  let r = random();
  for (const [task, share] of TASK_MIX) {
    if (r < share) return task;
    r -= share;
  }
  return 'chat';
}

function complexityOf(task: WorkloadTask): 'low' | 'medium' | 'high' {
  const r = random();
  if (task === 'classify' || task === 'extract') return r < 0.8 ? 'low' : 'medium';
  if (task === 'reasoning') return r < 0.6 ? 'high' : 'medium';
  if (task === 'code') return r < 0.25 ? 'high' : r < 0.8 ? 'medium' : 'low';
  return r < 0.4 ? 'low' : r < 0.9 ? 'medium' : 'high';
}

function distinctLine(id: number): WorkloadLine {
  const task = pickTask();
  const lang = random() < 0.5 ? 'en' : 'zh';
  const sensitive = random() < SENSITIVE_SHARE;
  const person = pick(lang === 'en' ? PEOPLE_EN : PEOPLE_ZH);
  const content = pick(PROMPTS[task][lang])(pick(lang === 'en' ? SUBJECTS_EN : SUBJECTS_ZH), person) + (sensitive ? sensitiveDetail(lang, person) : '');
  const metadata: Record<string, string> = {};
  if (random() >= NO_META_SHARE) {
    metadata.task_type = task;
    metadata.complexity = complexityOf(task);
  }
  if (sensitive) metadata.sensitivity = 'sensitive';
  const system = lang === 'en' ? 'You are a concise assistant for an operations team.' : '你是运营团队的简洁助手，请用中文回答。';
  return {
    id,
    task,
    lang,
    sensitive,
    body: { model: 'auto', messages: [{ role: 'system', content: system }, { role: 'user', content }], temperature: 0.3, max_tokens: MAX_TOKENS[task], metadata },
  };
}

/** A repeated question: business_type qa and temperature 0, the shape a response cache keys on. */
function asQuestion(line: WorkloadLine): WorkloadLine {
  return { ...line, body: { ...line.body, temperature: 0, metadata: { ...line.body.metadata, business_type: 'qa' } } };
}

export function generateWorkload(): WorkloadLine[] {
  const lines: WorkloadLine[] = [];
  let burst = 0;
  while (lines.length < TOTAL) {
    const repeatsLeft = REPEATS - lines.filter((l) => l.repeat_of !== undefined).length;
    const slotsLeft = TOTAL - lines.length;
    const originals = lines.filter((l) => l.repeat_of === undefined && l.body.metadata.business_type === 'qa');
    if (originals.length > 0 && repeatsLeft > 0 && random() < repeatsLeft / slotsLeft) {
      const original = pick(originals);
      // One in three repeats arrives as a burst of 3 identical concurrent requests.
      const size = random() < 1 / 3 ? Math.min(3, repeatsLeft) : 1;
      burst += size > 1 ? 1 : 0;
      for (let i = 0; i < size; i += 1) {
        lines.push({ ...original, id: lines.length + 1, repeat_of: original.id, ...(size > 1 ? { burst } : {}) });
      }
      continue;
    }
    // Half of the distinct questions are asked the cacheable way, so that repeats have something to hit.
    const line = distinctLine(lines.length + 1);
    lines.push(random() < 0.5 ? asQuestion(line) : line);
  }
  return lines.slice(0, TOTAL);
}

if (require.main === module) {
  const lines = generateWorkload();
  writeFileSync(WORKLOAD_FILE, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const count = (f: (l: WorkloadLine) => boolean) => lines.filter(f).length;
  console.log(
    `${WORKLOAD_FILE}: ${lines.length} requests, ${count((l) => l.repeat_of !== undefined)} repeats (${count((l) => l.burst !== undefined)} in bursts), ${count((l) => l.sensitive)} sensitive, ${count((l) => l.lang === 'zh')} Chinese, ${count((l) => l.body.metadata.task_type === undefined)} without task_type`,
  );
}
